import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# A fixed thread count (every core, torch's default): the commands a test runs do not adapt it to the machine's
# load (nbmerge/threads.py; tests/test_threads.py tests that), so results never depend on what else runs.
os.environ.setdefault("NBMERGE_THREADS", str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                             else os.cpu_count() or 1))

import pytest  # noqa: E402
import torch  # noqa: E402

from nbmerge.testing import openclip_vit_shapes, random_experts, random_model  # noqa: E402

torch.set_num_threads(min(2, torch.get_num_threads()))


@pytest.fixture
def tiny():
    """A 2-block open_clip-layout ViT (width 16) and three experts, float32."""
    base = random_model(openclip_vit_shapes())
    return base, random_experts(base, 3)


@pytest.fixture
def tiny64():
    """The same in float64, for exact algebraic identities."""
    base = random_model(openclip_vit_shapes(), dtype=torch.float64)
    return base, random_experts(base, 3)




@pytest.fixture(scope="session")
def micro_cache(tmp_path_factory):
    """A zoo cache holding the built `micro` suite, shared by every test that needs real checkpoints."""
    from nbmerge.pools.build import build_zoo

    root = tmp_path_factory.mktemp("zoo-cache")
    build_zoo("micro", cache=root, quiet=True)
    return root
