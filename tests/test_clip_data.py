"""CLIP task manifests, local dataset loaders (ImageFolder, IDX, CIFAR pickle, SVHN .mat and the other datasets'
own torchvision layouts) and zero-shot heads."""

import gzip
import json
import pickle
import sys

import numpy as np
import pytest
import torch

from nbmerge.errors import CheckpointError, NbmergeError
from nbmerge.tasks.clip import (
    carve_indices,
    fake_colour,
    load_plain_pickle,
    load_suite_manifest,
    load_task_manifest,
    manifest_dir,
    normalise_class_dir,
    open_task,
    preprocess_for,
    read_idx,
    task_names,
    verify_task_files,
    write_fake_dataset,
)
from nbmerge.tasks.clip_heads import ZeroShotHead, build_zeroshot_head, head_for_task, load_head, save_head

CLASS_COUNTS = {
    "SUN397": 397, "Cars": 196, "RESISC45": 45, "EuroSAT": 10, "SVHN": 10, "GTSRB": 43, "MNIST": 10, "DTD": 47,
    "Flowers102": 102, "PCAM": 2, "FER2013": 7, "OxfordIIITPet": 37, "STL10": 10, "CIFAR100": 100, "CIFAR10": 10,
    "Food101": 101, "FashionMNIST": 10, "EMNIST": 26, "KMNIST": 10, "RenderedSST2": 2,
}
CLIP8 = ["SUN397", "Cars", "RESISC45", "EuroSAT", "SVHN", "GTSRB", "MNIST", "DTD"]
CLIP14 = CLIP8 + ["Flowers102", "PCAM", "FER2013", "OxfordIIITPet", "STL10", "CIFAR100"]
CLIP20 = CLIP14 + ["CIFAR10", "Food101", "FashionMNIST", "EMNIST", "KMNIST", "RenderedSST2"]


# ----------------------------------------------------------------------------------------------------------------
# Manifests

def test_suites_have_the_methods_md_tasks_in_order():
    assert load_suite_manifest("clip-8")["tasks"] == CLIP8
    assert load_suite_manifest("clip-14")["tasks"] == CLIP14
    suite = load_suite_manifest("clip-20")
    assert suite["tasks"] == CLIP20 and suite["num_classes"] == CLASS_COUNTS
    assert task_names() == CLIP20
    tsv_order = json.loads((manifest_dir() / "suites.json").read_text())["tsv_order"]
    for size in (8, 14, 20):  # TSV's DATASETS_8/14/20 are prefixes of its own order: the same sets
        assert set(tsv_order[:size]) == set(CLIP20[:size])
    with pytest.raises(NbmergeError, match="clip-8"):
        load_suite_manifest("clip-9")


@pytest.mark.parametrize("task", CLIP20)
def test_every_task_manifest_parses_with_known_class_count(task):
    manifest = load_task_manifest(task)
    assert manifest["name"] == task
    assert manifest["num_classes"] == CLASS_COUNTS[task] == len(manifest["class_names"])
    assert len(set(manifest["class_names"])) == manifest["num_classes"]
    dirs = [normalise_class_dir(name) for name in manifest["class_dirs"]]
    assert len(set(dirs)) == len(dirs) and all(dirs)  # every class dir is unambiguous after normalisation
    assert manifest["templates"] and all("{c}" in t for t in manifest["templates"])
    assert manifest["source"]["class_names"] and manifest["source"]["templates"]
    assert set(manifest["splits"]) == {"train", "val", "test"}
    assert manifest["layout"]["formats"][-1] == "imagefolder"
    for entry in manifest["checksums"]:
        assert entry["md5"] is None or len(entry["md5"]) == 32
        assert entry["sha256"] is None or len(entry["sha256"]) == 64
    for alias in manifest["aliases"]:
        assert load_task_manifest(alias)["name"] == task


def test_aliases_of_tsv_and_fusionbench_resolve():
    assert load_task_manifest("stanford-cars")["name"] == "Cars"
    assert load_task_manifest("sun397")["name"] == "SUN397"
    assert load_task_manifest("emnist_letters")["name"] == "EMNIST"
    assert load_task_manifest("oxford_flowers102")["name"] == "Flowers102"
    assert load_task_manifest("rendered-sst2")["name"] == "RenderedSST2"
    with pytest.raises(NbmergeError, match="unknown CLIP task 'imagenet'"):
        load_task_manifest("imagenet")


def test_val_carve_reproduces_tsv_random_split():
    spec = load_task_manifest("MNIST")["splits"]["val"]
    kept, held = carve_indices(60000, spec)
    assert kept[0] == 36044  # TSV's own assertion on MNISTVal
    assert len(held) == 5000 and len(kept) == 55000
    assert set(kept).isdisjoint(held) and len(set(kept) | set(held)) == 60000
    reference = torch.utils.data.random_split(range(60000), [55000, 5000],
                                              generator=torch.Generator().manual_seed(0))
    assert list(held) == list(reference[1].indices)
    kept, held = carve_indices(100, spec)
    assert len(held) == 10  # 10% when below the 5000 cap


# ----------------------------------------------------------------------------------------------------------------
# Loaders

def _labels_and_colours(dataset, grayscale=False):
    for i in range(len(dataset)):
        image, label = dataset[i]
        assert image.dtype == torch.uint8 and image.shape[0] == 3
        assert tuple(image[:, 0, 0].tolist()) == fake_colour(label, grayscale)
    return dataset.labels


@pytest.mark.parametrize("task,fmt,grayscale", [
    ("MNIST", "idx", True), ("FashionMNIST", "idx.gz", True), ("KMNIST", "idx", True), ("EMNIST", "idx.gz", True),
    ("CIFAR10", "cifar", False), ("CIFAR100", "cifar", False), ("SVHN", "svhn_mat", False),
    ("DTD", "imagefolder", False), ("RESISC45", "imagefolder", False),
])
def test_fake_dataset_loads_with_right_labels(tmp_path, task, fmt, grayscale):
    write_fake_dataset(tmp_path, task, n_per_class=3, fmt=fmt)
    count = CLASS_COUNTS[task]
    test = open_task(task, tmp_path, "test")
    assert test.format == fmt.split(".")[0] and len(test) == 3 * count
    assert sorted(np.bincount(test.labels, minlength=count)) == [3] * count
    _labels_and_colours(test, grayscale)
    train, val, full = (open_task(task, tmp_path, split) for split in ("train", "val", "train_full"))
    assert len(full) == 3 * count and len(val) == int(0.1 * len(full)) and len(train) + len(val) == len(full)
    assert set(train.indices).isdisjoint(val.indices)
    _labels_and_colours(val, grayscale)


NATIVE = [  # task, format, grayscale images
    ("Cars", "cars_mat", False), ("Flowers102", "flowers_mat", False), ("OxfordIIITPet", "pets_txt", False),
    ("Food101", "food101_json", False), ("STL10", "stl10_bin", False), ("PCAM", "pcam_h5", False),
    ("FER2013", "fer2013_csv", True), ("GTSRB", "gtsrb_ppm", False),
]


@pytest.mark.parametrize("task,fmt,grayscale", NATIVE)
def test_native_format_loads_every_split_with_right_labels(tmp_path, task, fmt, grayscale):
    if fmt == "pcam_h5":
        pytest.importorskip("h5py")
    manifest = load_task_manifest(task)
    assert manifest["layout"]["formats"] == [fmt, "imagefolder"]
    count = CLASS_COUNTS[task]
    n = 5 if count == 2 else 2  # enough for a 10% val
    write_fake_dataset(tmp_path, task, n_per_class=n, image_size=4, fmt=fmt)
    test = open_task(task, tmp_path, "test")
    assert test.format == fmt and len(test) == n * count
    grouped = fmt == "food101_json"  # meta/test.json lists the images class by class
    expected = np.repeat(np.arange(count), n) if grouped else np.tile(np.arange(count), n)
    assert list(test.labels) == list(expected)  # the annotation file's order
    _labels_and_colours(test, grayscale)
    train, val, full = (open_task(task, tmp_path, split) for split in ("train", "val", "train_full"))
    assert len(full) == n * count and len(val) == int(0.1 * len(full)) and len(train) + len(val) == len(full)
    assert set(train.indices).isdisjoint(val.indices) and train.format == val.format == fmt
    assert sorted(np.bincount(full.labels, minlength=count)) == [n] * count
    _labels_and_colours(val, grayscale)
    _labels_and_colours(train, grayscale)


def test_native_format_comes_before_an_imagefolder_copy(tmp_path):
    write_fake_dataset(tmp_path, "GTSRB", n_per_class=1)
    assert open_task("GTSRB", tmp_path, "test").format == "imagefolder"
    write_fake_dataset(tmp_path, "GTSRB", n_per_class=1, fmt="gtsrb_ppm")
    test = open_task("GTSRB", tmp_path, "test")
    assert test.format == "gtsrb_ppm" and test.location == tmp_path / "gtsrb" / "GTSRB" / "Final_Test" / "Images"


def test_native_layouts_nested_as_tsv_stores_them(tmp_path):
    write_fake_dataset(tmp_path / "flowers102", "Flowers102", n_per_class=1, fmt="flowers_mat")
    write_fake_dataset(tmp_path / "stl10", "STL10", n_per_class=1, fmt="stl10_bin")  # TSV: <location>/stl10/...
    assert open_task("Flowers102", tmp_path, "test").location == tmp_path / "flowers102" / "flowers-102"
    assert len(open_task("STL10", tmp_path, "test")) == 10


def test_missing_native_dataset_names_every_path(tmp_path):
    with pytest.raises(NbmergeError) as error:
        open_task("Cars", tmp_path, "train")
    message = str(error.value)
    assert message.startswith("Cars: no 'train' data under")
    assert "Stanford Cars devkit files devkit/cars_train_annos.mat + cars_train in <root>/{stanford_cars" in message
    assert str(tmp_path / "stanford_cars" / "devkit" / "cars_train_annos.mat") in message
    assert str(tmp_path / "Cars" / "stanford_cars" / "cars_train") in message
    assert str(tmp_path / "Cars" / "train") in message  # the ImageFolder alternative
    with pytest.raises(NbmergeError) as error:
        open_task("FER2013", tmp_path, "test")
    message = str(error.value)
    assert "FER2013 CSV fer2013.csv or icml_face_data.csv or test.csv in <root>/{fer2013, FER2013/fer2013}" in message
    assert str(tmp_path / "fer2013" / "icml_face_data.csv") in message


def test_native_partial_copies_and_missing_images(tmp_path):
    write_fake_dataset(tmp_path, "OxfordIIITPet", n_per_class=1, fmt="pets_txt")
    base = tmp_path / "oxford-iiit-pet"
    (base / "annotations" / "test.txt").unlink()
    with pytest.raises(NbmergeError, match=r"found .*images but not .*test\.txt"):
        open_task("OxfordIIITPet", tmp_path, "test")
    first = base / "images" / "abyssinian_train0.jpg"
    first.unlink()
    with pytest.raises(NbmergeError, match=rf"1 of the 37 images listed in .*trainval\.txt are missing.*{first.name}"):
        open_task("OxfordIIITPet", tmp_path, "train")
    write_fake_dataset(tmp_path, "STL10", n_per_class=1, fmt="stl10_bin")
    (tmp_path / "stl10_binary" / "test_y.bin").unlink()
    with pytest.raises(NbmergeError, match="found .*test_X.bin but not .*test_y.bin"):
        open_task("STL10", tmp_path, "test")


def test_truncated_svhn_mat_names_the_file(tmp_path):
    write_fake_dataset(tmp_path, "SVHN", n_per_class=2, fmt="svhn_mat")
    mats = sorted(tmp_path.rglob("train_32x32.mat"))
    assert mats
    mats[0].write_bytes(mats[0].read_bytes()[:200])
    with pytest.raises(NbmergeError, match=r"train_32x32\.mat: not a readable SVHN \.mat file"):
        open_task("SVHN", tmp_path, "train")


def test_native_corrupt_files_name_the_file(tmp_path):
    write_fake_dataset(tmp_path, "STL10", n_per_class=1, fmt="stl10_bin")
    images = tmp_path / "stl10_binary" / "train_X.bin"
    images.write_bytes(images.read_bytes()[:-100])
    with pytest.raises(NbmergeError, match=r"train_X\.bin: .* bytes, expected 10 images .*truncated"):
        open_task("STL10", tmp_path, "train")
    (tmp_path / "stl10_binary" / "class_names.txt").write_text("a\nb\n")
    with pytest.raises(NbmergeError, match="class_names.txt .* differ from the manifest"):
        open_task("STL10", tmp_path, "test")

    write_fake_dataset(tmp_path, "GTSRB", n_per_class=1, fmt="gtsrb_ppm")
    gt = tmp_path / "gtsrb" / "GT-final_test.csv"
    gt.write_text(gt.read_text().replace("ClassId", "Class"))
    with pytest.raises(NbmergeError, match=r"GT-final_test\.csv: needs the ';'-separated columns Filename and ClassId"):
        open_task("GTSRB", tmp_path, "test")
    (tmp_path / "gtsrb" / "GTSRB" / "Training" / "extras").mkdir()
    with pytest.raises(NbmergeError, match="extras is not a class folder"):
        open_task("GTSRB", tmp_path, "train")

    write_fake_dataset(tmp_path, "Cars", n_per_class=1, fmt="cars_mat")
    (tmp_path / "stanford_cars" / "cars_test_annos_withlabels.mat").write_bytes(b"not a mat file")
    with pytest.raises(NbmergeError, match="cars_test_annos_withlabels.mat: not a readable Stanford Cars"):
        open_task("Cars", tmp_path, "test")
    from scipy.io import savemat

    savemat(tmp_path / "stanford_cars" / "devkit" / "cars_meta.mat", {"class_names": np.array(["x"] * 196, object)})
    with pytest.raises(NbmergeError, match="cars_meta.mat .* differ from the manifest"):
        open_task("Cars", tmp_path, "train")

    write_fake_dataset(tmp_path, "Flowers102", n_per_class=1, fmt="flowers_mat")
    savemat(tmp_path / "flowers-102" / "setid.mat", {"trnid": np.array([[1, 9999]]), "tstid": np.array([[1]])})
    with pytest.raises(NbmergeError, match=r"setid\.mat: 'trnid' holds image ids 1\.\.9999"):
        open_task("Flowers102", tmp_path, "train")
    assert len(open_task("Flowers102", tmp_path, "test")) == 1
    savemat(tmp_path / "flowers-102" / "setid.mat", {"trnid": np.array([[1, 2]])})
    with pytest.raises(NbmergeError, match=r"setid\.mat: no integer array 'tstid'"):
        open_task("Flowers102", tmp_path, "test")

    write_fake_dataset(tmp_path, "Food101", n_per_class=1, fmt="food101_json")
    (tmp_path / "food-101" / "meta" / "test.json").write_text('{"pizza": ["pizza/1"], "haggis": ["haggis/1"]}')
    with pytest.raises(NbmergeError, match=r"test\.json: classes that match no class of Food101: haggis"):
        open_task("Food101", tmp_path, "test")
    (tmp_path / "food-101" / "meta" / "test.json").write_text('{"pizza": ')
    with pytest.raises(NbmergeError, match=r"test\.json: not a readable JSON file"):
        open_task("Food101", tmp_path, "test")


def test_pets_class_ids_must_match_the_image_names(tmp_path):
    write_fake_dataset(tmp_path, "OxfordIIITPet", n_per_class=1, fmt="pets_txt")
    listing = tmp_path / "oxford-iiit-pet" / "annotations" / "test.txt"
    lines = listing.read_text().splitlines()
    lines[0] = lines[0].replace(" 1 1 1", " 2 1 1")  # abyssinian_test0 labelled american bulldog
    listing.write_text("\n".join(lines) + "\n")
    with pytest.raises(NbmergeError, match="line 1: image 'abyssinian_test0' has class id 2, which is 'american_bu"):
        open_task("OxfordIIITPet", tmp_path, "test")
    listing.write_text("abyssinian_test0\n")
    with pytest.raises(NbmergeError, match="line 1: expected '<image id> <class id> ...'"):
        open_task("OxfordIIITPet", tmp_path, "test")


def test_fer2013_csv_variants_and_errors(tmp_path):
    write_fake_dataset(tmp_path, "FER2013", n_per_class=2, fmt="fer2013_csv")
    base = tmp_path / "fer2013"
    rows = (base / "fer2013.csv").read_text().splitlines()
    usages = [row.rsplit(",", 1)[1] for row in rows[1:]]
    assert usages.count("Training") == 14 and usages.count("PublicTest") == usages.count("PrivateTest") == 7
    test = open_task("FER2013", tmp_path, "test")
    assert len(test) == 14 and test.image(0).size == (48, 48)  # PublicTest and PrivateTest together
    full = (base / "fer2013.csv").read_bytes()
    (base / "fer2013.csv").write_bytes(full[:-3000])  # cut inside the last row's pixels
    with pytest.raises(NbmergeError, match=r"fer2013\.csv, line 29: 2 fields, the header has 3; .* truncated"):
        open_task("FER2013", tmp_path, "test")
    (base / "fer2013.csv").write_bytes(full[:-4])
    with pytest.raises(NbmergeError, match=r"fer2013\.csv, line 29: Usage 'PrivateT' is none of PrivateTest, "):
        open_task("FER2013", tmp_path, "test")
    (base / "fer2013.csv").write_bytes(full)
    # icml_face_data.csv: the same rows as emotion, Usage, pixels with spaces in the header
    icml = ["emotion, Usage, pixels"] + [",".join([r.split(",")[0], r.rsplit(",", 1)[1], r.split(",")[1]])
                                         for r in rows[1:]]
    (base / "fer2013.csv").rename(base / "kept.csv")
    (base / "icml_face_data.csv").write_text("\n".join(icml) + "\n")
    assert list(open_task("FER2013", tmp_path, "test").labels) == list(test.labels)
    _labels_and_colours(open_task("FER2013", tmp_path, "train"), grayscale=True)
    # torchvision's train.csv / test.csv pair: train reads, Kaggle's unlabelled test.csv is refused
    (base / "icml_face_data.csv").unlink()
    training = [r.rsplit(",", 1)[0] for r in rows[1:] if r.endswith(",Training")]
    (base / "train.csv").write_text("emotion,pixels\n" + "\n".join(training) + "\n")
    (base / "test.csv").write_text("pixels\n" + "\n".join(r.split(",", 1)[1] for r in training) + "\n")
    assert len(open_task("FER2013", tmp_path, "train_full")) == 14
    with pytest.raises(NbmergeError, match=r"test\.csv: lacks the column\(s\) emotion .*carries no labels"):
        open_task("FER2013", tmp_path, "test")
    (base / "train.csv").write_text("emotion,pixels\n3,\"1 2 x\"\n")
    with pytest.raises(NbmergeError, match=r"train\.csv, line 2: expected an emotion id and 2304 pixel values"):
        open_task("FER2013", tmp_path, "train")
    (base / "train.csv").write_text("label,pixels\n")
    with pytest.raises(NbmergeError, match=r"train\.csv: lacks the column\(s\) emotion \(found: label, pixels\)"):
        open_task("FER2013", tmp_path, "train")


def test_pcam_without_h5py_asks_for_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "h5py", None)  # as if h5py were not installed
    spec = load_task_manifest("PCAM")["layout"]["pcam_h5"]
    (tmp_path / "pcam").mkdir()
    for name in spec["files"]["test"]:
        (tmp_path / "pcam" / name).write_bytes(b"")
    with pytest.raises(NbmergeError, match=r"camelyonpatch_level_2_split_test_x\.h5: .*needs h5py.*pip install h5py"):
        open_task("PCAM", tmp_path, "test")
    with pytest.raises(NbmergeError, match="pip install h5py"):
        write_fake_dataset(tmp_path / "fake", "PCAM", fmt="pcam_h5")
    write_fake_dataset(tmp_path, "PCAM", n_per_class=1)  # an ImageFolder export still reads: native files come first
    with pytest.raises(NbmergeError, match="pip install h5py"):
        open_task("PCAM", tmp_path, "test")
    assert open_task("PCAM", tmp_path, "train_full").format == "imagefolder"  # no train .h5 files


def test_pcam_h5_corrupt_and_lazy(tmp_path):
    pytest.importorskip("h5py")
    write_fake_dataset(tmp_path, "PCAM", n_per_class=2, fmt="pcam_h5")
    dataset = open_task("PCAM", tmp_path, "test")
    clone = pickle.loads(pickle.dumps(dataset))  # what DataLoader workers get: the file reopens on first use
    assert clone[3][1] == dataset[3][1] and torch.equal(clone[3][0], dataset[3][0])
    (tmp_path / "pcam" / "camelyonpatch_level_2_split_test_y.h5").write_bytes(b"junk")
    with pytest.raises(NbmergeError, match=r"split_test_y\.h5: no readable dataset 'y'"):
        open_task("PCAM", tmp_path, "test")


def test_imagefolder_for_every_task_and_eurosat_val_folder(tmp_path):
    for task in ("SUN397", "Cars", "EuroSAT", "FER2013", "Food101"):
        write_fake_dataset(tmp_path, task, n_per_class=1)
        dataset = open_task(task, tmp_path, "test")
        assert list(dataset.labels) == list(range(CLASS_COUNTS[task]))  # label order, as ImageFolder sorts
    val = open_task("EuroSAT", tmp_path, "val")  # EuroSAT's val is its own folder, not carved
    assert val.location.name == "val" and len(val) == 10
    assert len(open_task("EuroSAT", tmp_path, "train")) == 10


def test_imagefolder_accepts_index_and_loosely_spelled_class_dirs(tmp_path):
    from PIL import Image

    folder = tmp_path / "dtd" / "val"  # TSV's dtd/val is its test split
    for label, name in enumerate(load_task_manifest("DTD")["class_names"]):
        target = folder / (str(label) if label % 2 else name.upper()) / "a.jpg"
        target.parent.mkdir(parents=True)
        Image.new("RGB", (4, 4), fake_colour(label)).save(target, quality=100)
    dataset = open_task("DTD", tmp_path, "test", preprocess_for("ViT-B-32"))
    image, label = dataset[5]
    assert image.shape == (3, 224, 224) and image.dtype == torch.float32 and label == 5
    assert dataset.location == folder


def test_sun397_accepts_tsv_folder_names_and_prefers_test_over_val(tmp_path):
    write_fake_dataset(tmp_path, "SUN397", n_per_class=1)
    split = tmp_path / "SUN397" / "test"
    (split / "apartment_building_outdoor").rename(split / "a_apartment_building_outdoor")  # TSV's spelling
    names = load_task_manifest("SUN397")["class_names"]
    dataset = open_task("SUN397", tmp_path, "test")
    assert dataset.labels[names.index("apartment building outdoor")] == names.index("apartment building outdoor")
    (tmp_path / "SUN397" / "val").mkdir()  # an empty val/ beside test/ is ignored: test/ comes first
    assert open_task("SUN397", tmp_path, "test").location == split


def test_imagefolder_unknown_and_missing_class_dirs(tmp_path):
    write_fake_dataset(tmp_path, "PCAM", n_per_class=1)
    (tmp_path / "PCAM" / "test" / "tumour").mkdir()
    with pytest.raises(NbmergeError, match="match no class: tumour"):
        open_task("PCAM", tmp_path, "test")
    (tmp_path / "PCAM" / "test" / "tumour").rmdir()
    for image in (tmp_path / "PCAM" / "test" / "1").iterdir():
        image.unlink()
    with pytest.raises(NbmergeError, match=r"no images for 1 of 2 classes: '1' \(label 1\)"):
        open_task("PCAM", tmp_path, "test")
    assert len(open_task("PCAM", tmp_path, "test", allow_missing_classes=True)) == 1


def test_missing_dataset_names_task_layouts_and_paths(tmp_path):
    with pytest.raises(NbmergeError) as error:
        open_task("MNIST", tmp_path, "test")
    message = str(error.value)
    assert message.startswith("MNIST: no 'test' data under")
    assert "t10k-images-idx3-ubyte" in message and "ImageFolder" in message
    assert str(tmp_path / "MNIST" / "raw" / "t10k-images-idx3-ubyte") in message
    assert str(tmp_path / "mnist" / "test") in message
    with pytest.raises(NbmergeError, match="not a directory"):
        open_task("CIFAR10", tmp_path / "nowhere", "test")
    with pytest.raises(NbmergeError, match="unknown split 'dev'"):
        open_task("MNIST", tmp_path, "dev")


def test_idx_partner_missing_or_truncated(tmp_path):
    write_fake_dataset(tmp_path, "MNIST", n_per_class=1, fmt="idx")
    raw = tmp_path / "MNIST" / "raw"
    (raw / "t10k-labels-idx1-ubyte").unlink()
    with pytest.raises(NbmergeError, match="not its partner"):
        open_task("MNIST", tmp_path, "test")
    data = (raw / "train-images-idx3-ubyte").read_bytes()
    (raw / "train-images-idx3-ubyte").write_bytes(data[:-5])
    with pytest.raises(NbmergeError, match="truncated or corrupt"):
        read_idx(raw / "train-images-idx3-ubyte")
    (raw / "bad.gz").write_bytes(gzip.compress(b"\x00\x00\x0d\x01\x00\x00\x00\x01abcd"))
    with pytest.raises(NbmergeError, match="element type 0x0d"):
        read_idx(raw / "bad.gz")


def test_emnist_idx_is_transposed_and_offset(tmp_path):
    write_fake_dataset(tmp_path, "EMNIST", n_per_class=1, fmt="idx")
    raw = tmp_path / "EMNIST" / "raw"
    assert read_idx(raw / "emnist-letters-test-labels-idx1-ubyte").min() == 1  # stored 1..26
    image = np.zeros((1, 28, 28), np.uint8)
    image[0, 0, 5] = 255  # stored transposed: row 0, column 5 is row 5, column 0 upright
    header = bytes([0, 0, 8, 3]) + (1).to_bytes(4, "big") + (28).to_bytes(4, "big") * 2
    (raw / "emnist-letters-test-images-idx3-ubyte").write_bytes(header + image.tobytes())
    (raw / "emnist-letters-test-labels-idx1-ubyte").write_bytes(bytes([0, 0, 8, 1, 0, 0, 0, 1, 26]))
    dataset = open_task("EMNIST", tmp_path, "test")
    upright, label = dataset[0]
    assert label == 25 and upright[0, 5, 0] == 255 and upright[0, 0, 5] == 0


def test_cifar_pickle_refuses_code_and_checks_meta(tmp_path):
    class Exploit:
        def __reduce__(self):
            return (print, ("pwned",))

    bad = tmp_path / "evil"
    bad.write_bytes(pickle.dumps({"data": Exploit()}, protocol=2))
    with pytest.raises(NbmergeError, match=r"global (__builtin__|builtins)\.print is not allowed"):
        load_plain_pickle(bad)
    legacy = tmp_path / "legacy"  # the real CIFAR files name numpy 1's module path
    data = pickle.dumps({"data": np.arange(6, dtype=np.uint8).reshape(2, 3), "labels": [1, 2]}, protocol=2)
    legacy.write_bytes(data.replace(b"numpy._core.multiarray", b"numpy.core.multiarray"))
    assert load_plain_pickle(legacy)["data"].tolist() == [[0, 1, 2], [3, 4, 5]]
    write_fake_dataset(tmp_path, "CIFAR10", n_per_class=1, fmt="cifar")
    meta = tmp_path / "cifar-10-batches-py" / "batches.meta"
    meta.write_bytes(pickle.dumps({"label_names": ["x"] * 10}, protocol=2))
    with pytest.raises(NbmergeError, match="differ from the manifest"):
        open_task("CIFAR10", tmp_path, "test")


def test_verify_task_files_md5(tmp_path):
    write_fake_dataset(tmp_path, "MNIST", n_per_class=1, fmt="idx.gz")
    with pytest.raises(NbmergeError, match="md5 .* manifest records f68b3c2d"):
        verify_task_files("MNIST", tmp_path)
    assert verify_task_files("MNIST", tmp_path / "MNIST" / "raw" / "nothing") == {}


def test_write_fake_dataset_rejects_layouts_a_task_lacks(tmp_path):
    with pytest.raises(NbmergeError, match="cannot be stored as 'idx'"):
        write_fake_dataset(tmp_path, "Cars", fmt="idx")


def test_preprocess_for_reads_open_clip_config_offline():
    transform = preprocess_for("ViT-B-16")
    from PIL import Image

    out = transform(Image.new("L", (40, 30), 128))
    assert out.shape == (3, 224, 224)
    with pytest.raises(NbmergeError, match="no built-in config"):
        preprocess_for("ViT-Q-99")


# ----------------------------------------------------------------------------------------------------------------
# Zero-shot heads

@pytest.fixture(scope="module")
def tiny_clip():
    import open_clip

    torch.manual_seed(0)
    model = open_clip.model.CLIP(
        embed_dim=32, vision_cfg=dict(image_size=28, patch_size=7, width=64, layers=1, head_width=32),
        text_cfg=dict(context_length=16, vocab_size=49408, width=64, heads=4, layers=1))
    tokenizer = open_clip.get_tokenizer("ViT-B-32", context_length=16)  # bundled BPE vocab: no download
    return model, tokenizer


def test_zeroshot_head_is_mean_of_normalised_template_embeddings(tiny_clip):
    model, tokenizer = tiny_clip
    names, templates = ["cat", "dog", "car"], ["a photo of a {c}.", "a drawing of the {c}."]
    head = build_zeroshot_head(model, tokenizer, names, templates, "cpu")
    assert head.weight.shape == (3, 32) and torch.allclose(head.weight.norm(dim=1), torch.ones(3))
    assert head.logit_scale == pytest.approx(1 / 0.07, rel=1e-5)  # open_clip's initial logit_scale
    with torch.no_grad():
        text = torch.nn.functional.normalize(model.encode_text(tokenizer(["a drawing of the dog."])), dim=-1)
        first = torch.nn.functional.normalize(model.encode_text(tokenizer(["a photo of a dog."])), dim=-1)
    expected = torch.nn.functional.normalize((text + first)[0] / 2, dim=0)
    assert torch.allclose(head.weight[1], expected, atol=1e-6)
    one = build_zeroshot_head(model, tokenizer, ["dog"], ["a photo of a {c}."], logit_scale=100.0)
    assert torch.allclose(one.weight[0], first[0], atol=1e-6) and one.logit_scale == 100.0
    features = torch.randn(4, 32)
    assert head.logits(features).shape == (4, 3)
    with pytest.raises(NbmergeError, match="no '{c}' placeholder"):
        build_zeroshot_head(model, tokenizer, names, ["a photo"])


def test_head_for_task_and_file_round_trip(tiny_clip, tmp_path):
    model, tokenizer = tiny_clip
    head = head_for_task(model, tokenizer, "PCAM")
    path = tmp_path / "heads" / "PCAM.safetensors"
    save_head(head, path, metadata={"task": "PCAM", "model": "tiny"})
    names = load_task_manifest("PCAM")["class_names"]
    loaded = load_head(path, class_names=names, embed_dim=32)
    assert torch.equal(loaded.weight, head.weight) and loaded.logit_scale == pytest.approx(head.logit_scale)
    assert loaded.class_names == tuple(names)
    with pytest.raises(CheckpointError, match="class 0 is"):
        load_head(path, class_names=["a", "b"])
    with pytest.raises(CheckpointError, match="head dimension 32"):
        load_head(path, embed_dim=512)
    from safetensors.torch import save_file

    save_file({"weight": head.weight * 100, "logit_scale": torch.tensor(1.0)}, str(tmp_path / "scaled.safetensors"))
    with pytest.raises(CheckpointError, match="unit vectors"):
        load_head(tmp_path / "scaled.safetensors")
    save_file({"weight": head.weight}, str(tmp_path / "nolog.safetensors"))
    with pytest.raises(CheckpointError, match="exactly 'weight' and 'logit_scale'"):
        load_head(tmp_path / "nolog.safetensors")
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(CheckpointError, match="not a readable safetensors"):
        load_head(path)
    with pytest.raises(CheckpointError, match="no such head file"):
        load_head(tmp_path / "absent.safetensors")
    assert isinstance(loaded, ZeroShotHead)
