"""The pool-kind table (nbmerge.pools.kinds): what reads a pool by its name reads it from there."""

from __future__ import annotations

import pytest

from nbmerge.extras import command_extras
from nbmerge.pools.kinds import POOL_KINDS, is_pool, pool_kind, pool_patterns


def test_each_kind_is_found_by_its_prefix_and_names_its_extras():
    assert [pool_kind(name).prefix for name in ("clip-vit-b32-8", "glue-gpt2-7", "lm-llama-3")] == \
        ["clip-", "glue-", "lm-"]
    assert pool_kind("text8") is None and not is_pool("tiny8") and is_pool("lm-llama-3")
    assert command_extras("pool", "glue-gpt2-7") == ("lm",) and command_extras("pool", "clip-vit-b32-8") == ("clip",)
    assert pool_patterns().endswith(" or lm-<model>-<n> (lm-llama-3)")


@pytest.mark.parametrize("kind", POOL_KINDS, ids=lambda k: k.prefix)
def test_every_option_a_kind_names_is_a_flag_of_pool_import(kind):
    from nbmerge.cli import build_parser

    parser = build_parser()
    args = parser.parse_args(["pool", "import", kind.prefix + "x-2", "--checkpoints", "c", "--data-root", "d"])
    for flag, _ in kind.options:
        assert hasattr(args, flag), flag
