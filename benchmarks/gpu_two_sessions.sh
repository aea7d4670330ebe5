#!/usr/bin/env bash
# The reference run on a two-GPU machine: two sessions side by side, one per GPU, each with
# its own results folder and ceilings cache (merged afterwards by scripts/merge_reference.py).
#   usage: bash benchmarks/gpu_two_sessions.sh "CHAPTERS FOR GPU 0" "CHAPTERS FOR GPU 1"
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
for side in a b; do
  rm -rf "res_$side" "cache_$side"; mkdir -p "res_$side"
  cp -r results/. "res_$side/"; cp -r "${LABKIT_CACHE_DIR:-.gpu_cache}" "cache_$side"
done
# shellcheck disable=SC2086
CUDA_VISIBLE_DEVICES=0 RUN_NAME=a LABKIT_RESULTS_DIR=$PWD/res_a LABKIT_CACHE_DIR=$PWD/cache_a \
  SKIP_INSTALL=1 PROBES=${PROBES_A:-} bash benchmarks/gpu_session.sh ${PROBES_A:+--probes} $1 > "${OUT:-/tmp/out}/a.log" 2>&1 &
CUDA_VISIBLE_DEVICES=1 RUN_NAME=b LABKIT_RESULTS_DIR=$PWD/res_b LABKIT_CACHE_DIR=$PWD/cache_b \
  SKIP_INSTALL=1 PROBES=${PROBES_B:-} bash benchmarks/gpu_session.sh ${PROBES_B:+--probes} $2 > "${OUT:-/tmp/out}/b.log" 2>&1 &
wait
if [ "${RUN_GPU_TESTS:-0}" = 1 ]; then  # the unit tests' CUDA and Triton cases
  PYTHONPATH=/tmp/site:$PWD timeout 200 python3 -m pytest -q -o addopts="" -p no:cacheprovider \
    --ignore=tests/browser -m gpu tests > "${OUT:-/tmp/out}/gpu_pytest.log" 2>&1
  tail -5 "${OUT:-/tmp/out}/gpu_pytest.log"
fi
tail -12 "${OUT:-/tmp/out}/a.log" "${OUT:-/tmp/out}/b.log"
