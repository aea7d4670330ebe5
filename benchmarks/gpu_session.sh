#!/usr/bin/env bash
# One call on the GPU machine (no Jupyter there, no package index): install the carried Jupyter
# wheels, run the harness parity benchmark and the copy-detector probe, then execute the chapters
# with full sizes, recording the reference results into results/nvidia-h200.json.
#   usage (repo root on the GPU machine, `.whl` carried):  bash benchmarks/gpu_session.sh [notebooks...]
set -uo pipefail
out=${OUT:-/tmp/out}/run
mkdir -p "$out/notebooks" "$out/cache"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
export LABKIT_RECORD_REFERENCE=nvidia-h200 LABKIT_CACHE_DIR=$out/cache
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())'
if [ "${SKIP_PARITY:-0}" != 1 ]; then
  timeout 300 python3 benchmarks/harness_parity.py "$out/harness_parity" --record-as nvidia-h200 --repeats "${PARITY_REPEATS:-3}" 2>&1 | tee "$out/harness_parity.log"
  timeout 120 python3 benchmarks/gpu_copies.py "$out" > "$out/gpu_copies.log" 2>&1 || echo "gpu_copies failed"
  timeout 120 python3 benchmarks/gpu_bad_inputs.py "$out/gpu_bad_inputs.json" > "$out/gpu_bad_inputs.log" 2>&1 || echo "gpu_bad_inputs failed"
  timeout 120 python3 benchmarks/bf16_ceiling_probe.py "$out/bf16_ceiling_probe.json" 2>&1 | tee "$out/bf16_ceiling_probe.log"
fi
timeout 180 python3 benchmarks/gpu_chapters.py --out "$out/gpu_chapters.json" > "$out/gpu_chapters.log" 2>&1 || echo "gpu_chapters failed"
notebooks=("$@")
[ ${#notebooks[@]} -eq 0 ] && notebooks=(notebooks/[0-9][0-9]_*.py)
for nb in "${notebooks[@]}"; do
  timeout 400 python3 scripts/execute_notebook.py --output-dir "$out/notebooks" "$nb" 2>&1 | tail -25 | tee -a "$out/notebooks.log"
done
cp results/nvidia-h200.json "$out/" 2>/dev/null
tar czf "${OUT:-/tmp/out}/gpu_run.tar.gz" -C "$(dirname "$out")" run
echo "done: $(ls "$out")"
