#!/usr/bin/env bash
# The prepared GPU check: one device call of at most 10 minutes. Files go to $OUT (the device tool's output folder;
# reports/ when run by hand); copy gpu_check.* and gpu_lm_merges.* from there into reports/.
#
#   run(command="bash bench/gpu_check.sh", timeout_s=600)
#
# 0. the GPU's read path (pinned staging, inputs kept on the device, checks read once per tensor) gives the CPU's
#    bits: the CUDA test of tests/test_device_inputs.py, where pytest is installed;
# 1. every registered method on ViT-B/32- and ViT-L/14-shaped experts, timed on the GPU and checked against the CPU
#    (bench.gpu; its --budget-s stops starting new cells, and the report marks the ones it skipped);
# 2. the language-model merges of the mergekit benchmark (a bf16 Llama of 1.1 B parameters, 3 experts, sharded
#    folders) through `nbmerge merge --device cuda`: task arithmetic, TIES and DARE-TIES, each timed
#    (bench.mergekit --no-mergekit; mergekit itself is not on that machine).
# The device image has torch, safetensors, transformers and numpy; nbmerge runs from this checkout (PYTHONPATH).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-reports}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
status=0
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
if python3 -c "import pytest" 2>/dev/null; then
  timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_device_inputs.py -k cuda || status=1
fi
timeout 270 python3 -m bench.gpu --budget-s 200 --out "$OUT/gpu_check" || status=1
timeout 240 python3 -m bench.mergekit --no-mergekit --device cuda --repeats 1 --out "$OUT/gpu_lm_merges" || status=1
exit $status
