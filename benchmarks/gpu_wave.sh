#!/usr/bin/env bash
# One device call, several GPU jobs in turn: each command runs with its own time limit and log,
# and everything they write lands in one tarball under $OUT (the device returns few files).
# Results recorded with LABKIT_RECORD_REFERENCE go to results/<machine>.json, copied back too,
# and so do the measured ceilings (gpu_cache/): carry them as .gpu_cache to reuse them. The
# tarball is rewritten after every step, so a call cut short still returns what finished.
#
#   usage (repo root on the GPU machine):
#     bash benchmarks/gpu_wave.sh "python3 benchmarks/reproduce.py 02 --runs 3" "..."
#   env: STEP_TIMEOUT (s per command, default 240), REFERENCE (default nvidia-h200),
#        SKIP_INSTALL=1 when the Jupyter wheels (.whl) are not needed or already installed,
#        CHAIN=1 in a call that follows another on the same warm machine: the reference file the
#        earlier call wrote is restored first (the device sends the repo's own copy afresh each
#        call; the last one is kept in .wave_state/ (WAVE_STATE), git-ignored, which the machine keeps), so
#        chapter 99 run in a later call reads every chapter recorded in the earlier ones (and
#        results/reproduce/, kept the same way, every reproduce record they wrote)
set -uo pipefail
started=$(date +%s)
out=${OUT:-/tmp/out}/wave
mkdir -p "$out"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
# A call for the nvidia-h200 kind may be served by an H100 (the device's README): its timings
# must not land in the H200's reference file, so such a call stops here, before any step runs,
# and says so (the check applies only where REFERENCE is nvidia-h200; GPU_CHECK=0 skips it),
# before the wheels are installed, so a wrong card costs seconds; torch names the card where
# nvidia-smi cannot (review 2026-12-05r2 item 3). On "wrong card": give_back, then call again.
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
[ -n "$gpu_name" ] || gpu_name=$(python3 -c 'import torch; print(torch.cuda.get_device_name(0))' 2>/dev/null)
if [ "${GPU_CHECK:-1}" = 1 ] && [ "${REFERENCE:-nvidia-h200}" = nvidia-h200 ] && ! grep -qw H200 <<<"$gpu_name"; then
  echo "wrong card: this machine's GPU is '${gpu_name:-not readable by nvidia-smi or torch}', not an H200: nothing run, nothing recorded" | tee -a "$out/steps.txt"
  # steps.txt and nvidia-smi.txt only, so scripts/take_wave.sh shows why (it reads the tarball)
  tar czf "${OUT:-/tmp/out}/wave.tar.gz" -C "$(dirname "$out")" wave
  exit 3
fi
if [ "${SKIP_INSTALL:-0}" != 1 ] && ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl > "$out/pip.log" 2>&1 || tail -5 "$out/pip.log"
fi
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 KINETO_LOG_LEVEL=6 WAVE_OUT=$out
export LABKIT_RECORD_REFERENCE=${REFERENCE:-nvidia-h200}
export LABKIT_CACHE_DIR=${LABKIT_CACHE_DIR:-$PWD/.gpu_cache}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$LABKIT_CACHE_DIR"
reference_file=results/${LABKIT_RECORD_REFERENCE}.json
state=${WAVE_STATE:-.wave_state}  # a test points it elsewhere, so it leaves nothing in the repo
if [ "${CHAIN:-0}" = 1 ]; then
  if [ -f "$state/${LABKIT_RECORD_REFERENCE}.json" ]; then
    cp "$state/${LABKIT_RECORD_REFERENCE}.json" "$reference_file"
    # and the reproduce records: chapter 99 reads them (2026-12-03 22:20: a chained 99 read the
    # repo's older C7 record, not the call before's fresh one, and showed C7 "NOT reproduced")
    cp "$state"/reproduce/*.json results/reproduce/ 2>/dev/null || true
    echo "chain: restored $reference_file and results/reproduce/ from the earlier call" | tee -a "$out/steps.txt"
  else
    echo "chain: no earlier call's reference file on this machine (a fresh one?)" | tee -a "$out/steps.txt"
  fi
fi
pack() {
  mkdir -p "$state/reproduce" && cp "$reference_file" "$state/" 2>/dev/null  # for a CHAIN=1 call after this one
  cp results/reproduce/*.json "$state/reproduce/" 2>/dev/null
  rm -rf "$out/results" "$out/gpu_cache"
  cp -r results "$out/results"  # the reference file and whatever the jobs wrote under results/
  mkdir -p "$out/gpu_cache"  # the measured ceilings: carry them back to reuse one set per machine
  cp "$LABKIT_CACHE_DIR"/ceilings-*.json "$out/gpu_cache/" 2>/dev/null || true
  tar czf "${OUT:-/tmp/out}/wave.tar.gz.part" -C "$(dirname "$out")" wave \
    && mv "${OUT:-/tmp/out}/wave.tar.gz.part" "${OUT:-/tmp/out}/wave.tar.gz"
}
n=0
for command in "$@"; do
  n=$((n + 1))
  t0=$(date +%s)
  timeout "${STEP_TIMEOUT:-240}" bash -c "$command" > "$out/step$n.log" 2>&1; rc=$?
  echo "step $n rc=$rc in $(( $(date +%s) - t0 )) s: $command" | tee -a "$out/steps.txt"
  tail -15 "$out/step$n.log"
  pack  # after every step: a call cut short by its limit still hands back what finished
done
echo "wave: $(( $(date +%s) - started )) s" | tee -a "$out/steps.txt"
pack
