"""The zoo's offline data layer: micro tasks build, are deterministic, match data_manifests/, fail loudly."""

import json
import shutil

import numpy as np
import pytest

from nbmerge.errors import NbmergeError
from nbmerge.tasks import vision as data
from nbmerge.tasks.vision import IMAGE_SIZE, SUITES, TASKS, DataSourceError, build_task, manifest_for

MICRO = SUITES["micro"]


@pytest.fixture(scope="module")
def micro():
    """Each micro task, built with verification against data_manifests/ (the manifest check is the test)."""
    return {name: build_task(name) for name in MICRO}


@pytest.fixture
def manifests(tmp_path, monkeypatch):
    """A writable copy of data_manifests/ that the builders read instead of the real one."""
    copy = tmp_path / "data_manifests"
    shutil.copytree(data.manifest_dir(), copy)
    monkeypatch.setenv("NBMERGE_DATA_MANIFESTS", str(copy))
    return copy


def _rows(images):
    return {row.tobytes() for row in images}


def test_suites_nest_and_name_known_tasks():
    assert len(MICRO) == 3
    assert [len(SUITES[s]) for s in ("tiny8", "tiny14", "tiny20")] == [8, 14, 20]
    assert SUITES["tiny8"] == SUITES["tiny14"][:8] and SUITES["tiny14"] == SUITES["tiny20"][:14]
    assert len(set(SUITES["tiny20"])) == 20
    assert set(MICRO) <= set(TASKS) and set(SUITES["tiny20"]) <= set(TASKS)
    assert {"fashion", "digits", "textures", "faces"} <= set(SUITES["tiny8"])


def test_manifests_on_disk_match_the_specs():
    root = data.manifest_dir()
    for suite, tasks in SUITES.items():
        assert json.loads((root / "suites" / f"{suite}.json").read_text())["tasks"] == list(tasks)
    for name, spec in TASKS.items():
        manifest = manifest_for(name)
        assert tuple(manifest["class_names"]) == spec.class_names
        assert set(manifest["arrays"]) == {"train_x", "train_y", "val_x", "val_y", "test_x", "test_y"}
        assert all(len(entry["sha256"]) == 64 for entry in manifest["files"])
    assert manifest_for("pretrain_pool")["num_classes"] == len(data.pool_class_names())


def test_micro_tasks_shapes_dtypes_labels(micro):
    for name, task in micro.items():
        assert task.name == name and task.class_names == TASKS[name].class_names
        recorded = manifest_for(name)["splits"]
        for split in data.SPLITS:
            x, y = getattr(task, f"{split}_x"), getattr(task, f"{split}_y")
            assert x.dtype == np.uint8 and x.shape == (recorded[split], IMAGE_SIZE, IMAGE_SIZE)
            assert y.dtype == np.int64 and y.shape == (len(x),)
            # balanced, every class present, labels in range
            assert np.array_equal(np.bincount(y, minlength=task.num_classes),
                                  np.full(task.num_classes, len(y) // task.num_classes))
            assert x.std() > 10  # not blank


def test_micro_splits_are_disjoint(micro):
    for task in micro.values():
        train, val, test = _rows(task.train_x), _rows(task.val_x), _rows(task.test_x)
        assert not (train & val) and not (train & test) and not (val & test)


def test_real_source_images_never_feed_two_splits():
    labels = np.repeat(np.arange(3), 50)
    parts = data._split_sources(labels, 3, np.random.default_rng(0))
    for label in range(3):
        pieces = [parts[split][label] for split in data.SPLITS]
        joined = np.concatenate(pieces)
        assert len(set(joined.tolist())) == len(joined) == 50
        assert all(len(piece) > 0 for piece in pieces)


def test_builds_are_deterministic(micro):
    for name in MICRO:
        again = build_task(name, verify=False)
        for key, value in micro[name].arrays().items():
            assert np.array_equal(value, again.arrays()[key]), (name, key)


def test_tampered_array_hash_names_the_array(manifests):
    path = manifests / "tasks" / "digits.json"
    manifest = json.loads(path.read_text())
    recorded = manifest["arrays"]["val_x"]["sha256"]
    manifest["arrays"]["val_x"]["sha256"] = "0" * 64
    path.write_text(json.dumps(manifest))
    with pytest.raises(DataSourceError, match="val_x") as error:
        build_task("digits")
    assert "0" * 64 in str(error.value) and recorded in str(error.value)
    assert isinstance(error.value, NbmergeError)


def test_tampered_source_file_hash_names_the_file(manifests):
    path = manifests / "tasks" / "hebrew.json"
    manifest = json.loads(path.read_text())
    font = manifest["files"][0]
    actual = font["sha256"]
    font["sha256"] = "f" * 64
    path.write_text(json.dumps(manifest))
    with pytest.raises(DataSourceError, match="checksum mismatch") as error:
        build_task("hebrew")
    assert font["path"] in str(error.value) and actual in str(error.value) and "f" * 64 in str(error.value)


def test_missing_manifest_is_a_clear_error(manifests):
    (manifests / "tasks" / "digits.json").unlink()
    with pytest.raises(DataSourceError, match="no manifest"):
        build_task("digits")
    assert build_task("digits", verify=False).num_classes == 10


def test_missing_debian_font_package_names_it(monkeypatch):
    real = data._dpkg_query
    monkeypatch.setattr(data, "_dpkg_query", lambda package: None if package == "fonts-noto-core" else real(package))
    with pytest.raises(DataSourceError, match="apt-get install fonts-noto-core"):
        build_task(MICRO[1], verify=False)


def test_missing_font_file_names_its_package(monkeypatch):
    ghost = data.FontFace("/nonexistent/NotoSansHebrew-Regular.ttf", 0, "fonts-noto-core")
    monkeypatch.setattr(data, "_font_faces", lambda: [ghost])
    with pytest.raises(DataSourceError, match="apt-get install --reinstall fonts-noto-core"):
        build_task("hebrew", verify=False)


def test_missing_debian_dataset_package_names_it(monkeypatch):
    monkeypatch.setattr(data, "_dpkg_query", lambda package: None)
    with pytest.raises(DataSourceError, match="apt-get install dataset-fashion-mnist"):
        build_task("fashion", verify=False)


def test_missing_pypi_package_names_it(monkeypatch):
    real = data._find_module
    monkeypatch.setattr(data, "_find_module", lambda module: None if module == "sklearn" else real(module))
    with pytest.raises(DataSourceError, match="pip install scikit-learn"):
        build_task("digits", verify=False)
    monkeypatch.setattr(data, "_find_module", lambda module: None if module == "skimage" else real(module))
    with pytest.raises(DataSourceError, match="pip install scikit-image"):
        build_task("faces", verify=False)


def test_unknown_task_lists_the_known_ones():
    with pytest.raises(DataSourceError, match="latin"):
        build_task("klingon")


def test_pretraining_pool_is_disjoint_from_every_task_by_character():
    pool = data.pool_class_names()
    assert len(pool) == len(set(pool)) == 400
    task_chars = {char for spec in TASKS.values() for char in spec.chars}
    task_chars |= {name for spec in TASKS.values() for name in spec.class_names if len(name) == 1}
    assert len(task_chars) >= 150
    assert not set(pool) & task_chars


def test_glyph_tasks_use_distinct_characters():
    seen = {}
    for spec in TASKS.values():
        assert len(set(spec.chars)) == len(spec.chars)
        for char in spec.chars:
            assert char not in seen, (char, spec.name, seen.get(char))
            seen[char] = spec.name
