#!/usr/bin/env bash
# One call on the GPU machine records the reference: install the carried Jupyter wheels, run
# the probes, then execute chapters with full sizes, recording results/nvidia-h200.json.
# No Jupyter and no package index there: `.whl` (Jupyter wheels) is carried; see the README.
#
#   usage (repo root on the GPU machine):
#     bash benchmarks/gpu_session.sh [--probes] [notebooks/NN_x.py ...]
#   env: NOTEBOOK_TIMEOUT (s, default 300), REFERENCE (default nvidia-h200),
#        PROBES (the probe scripts --probes runs; default: every benchmarks/gpu_*.py probe),
#        LABKIT_CACHE_DIR (default .gpu_cache: carry it to reuse measured ceilings),
#        RUN_NAME (default run: the folder and tarball under $OUT), LABKIT_RESULTS_DIR (where
#        the results file is written; two sessions on two GPUs each take their own), SKIP_INSTALL=1
#   Two GPUs: install once, then run two sessions side by side, one per GPU, e.g.
#     CUDA_VISIBLE_DEVICES=0 RUN_NAME=a LABKIT_RESULTS_DIR=$PWD/res_a bash ... &
set -uo pipefail
started=$(date +%s)
run_name=${RUN_NAME:-run}
out=${OUT:-/tmp/out}/$run_name
mkdir -p "$out/notebooks" "$out/probes"
if [ "${SKIP_INSTALL:-0}" != 1 ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
fi
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 KINETO_LOG_LEVEL=6
export LABKIT_RECORD_REFERENCE=${REFERENCE:-nvidia-h200}
export LABKIT_CACHE_DIR=${LABKIT_CACHE_DIR:-$PWD/.gpu_cache}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$LABKIT_CACHE_DIR"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name(), "GPUs:", torch.cuda.device_count())'
probes=0
[ "${1:-}" = "--probes" ] && { probes=1; shift; }
if [ $probes = 1 ]; then
  for probe in ${PROBES:-benchmarks/gpu_chapters.py benchmarks/gpu_timeline.py benchmarks/gpu_copies.py benchmarks/gpu_05_loader.py}; do
    [ -f "$probe" ] || continue
    name=$(basename "$probe" .py)
    t0=$(date +%s)
    timeout 240 python3 "$probe" "$out/probes" > "$out/probes/$name.log" 2>&1; rc=$?
    echo "$name: rc=$rc in $(( $(date +%s) - t0 )) s" | tee -a "$out/timings.txt"
  done
fi
notebooks=("$@")
for nb in "${notebooks[@]}"; do
  t0=$(date +%s)
  timeout "${NOTEBOOK_TIMEOUT:-300}" python3 scripts/execute_notebook.py --output-dir "$out/notebooks" "$nb" \
    > "$out/notebooks/$(basename "$nb" .py).log" 2>&1; rc=$?
  echo "$(basename "$nb"): rc=$rc in $(( $(date +%s) - t0 )) s" | tee -a "$out/timings.txt"
  [ $rc = 0 ] || tail -30 "$out/notebooks/$(basename "$nb" .py).log"
done
cp "${LABKIT_RESULTS_DIR:-results}/$LABKIT_RECORD_REFERENCE.json" "$out/" 2>/dev/null
cp -r "$LABKIT_CACHE_DIR" "$out/cache" 2>/dev/null
echo "session: $(( $(date +%s) - started )) s" | tee -a "$out/timings.txt"
tar czf "${OUT:-/tmp/out}/gpu_$run_name.tar.gz" -C "$(dirname "$out")" "$run_name"
