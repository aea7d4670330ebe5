#!/usr/bin/env bash
# What the H200 still owes, as device calls of under 600 s each: A then B at once (B restores
# the reference file A wrote, so 99, run last, reads every fresh record; a call that lands on a
# fresh machine says "no earlier call's reference file" and 99's copy must then be left out);
# C re-records the other chapters when their sources change; D is issue 41's.
# Seconds beside each step: the last H200 records (chapter runs, reproduce.py's wall per run).
#   usage (repo root on the GPU machine, carry [".whl"]):  bash benchmarks/rerecord_calls.sh A|B|C|D
#   then here, after the last call:  bash scripts/take_wave.sh <files_at of each call> <name>, in order
set -uo pipefail
nb() { echo "python3 scripts/execute_notebook.py --output-dir \$WAVE_OUT/nb --cell-seconds \$WAVE_OUT/cells-$1.json notebooks/$1*.py"; }
repro() { echo "python3 benchmarks/reproduce.py $1 --runs 3"; }
case "${1:-}" in
  A)  # ~450 s: what the 2026-12-03 18:30 calls left: 05's reproduce (cut off by the budget, ~85 s
      # a run), then 03 on its new C7 rule (batch 128 by wall time) and its reproduce
    STEP_TIMEOUT=360 bash benchmarks/gpu_wave.sh \
      "$(repro 05)" "$(nb 03)" "$(repro 03)" ;;
  B)  # ~500 s, straight after A (CHAIN=1 needs the same warm machine: call within 30 s): 08 on its
      # new order (CUDA Graphs before compile and folding), its reproduce, then the ledger last
    CHAIN=1 STEP_TIMEOUT=360 bash benchmarks/gpu_wave.sh "$(nb 08)" "$(repro 08)" "$(nb 99)" ;;
  C)  # the whole course again (the 2026-12-03 plan; ~1,700 s over three calls): only when the
      # chapters' sources changed since their records
    STEP_TIMEOUT=240 bash benchmarks/gpu_wave.sh \
      "$(repro 04)" "$(nb 04)" "$(nb 03)" "$(nb 00)" "$(nb 01)" "$(nb 02)" "LABKIT_DDP_RESNET50=1 $(nb 06)" "$(nb 07)" \
      "$(repro 03)" "$(repro 02)" "$(repro 07)" ;;
  D)  # issue 41's untried levers (about 220 s), in a call of its own, after the Triton op's own check on
      # Hopper (~90 s: fp16 errors, shared memory and spills per config, compiled + CUDA graph);
      # outputs (wave/tc, wave/pd) are read by hand
    SKIP_INSTALL=1 STEP_TIMEOUT=400 bash benchmarks/gpu_wave.sh \
      "python3 benchmarks/cpu_triton_interpret.py --device cuda --out \$WAVE_OUT/tc --dtypes float16 --budget 60" \
      "python3 benchmarks/gpu_past_defaults.py --out \$WAVE_OUT/pd --budget 300 --levers 'Triton fused epilogue, compiled,Triton compiled at batch 1024'" ;;
  *) echo "usage: bash benchmarks/rerecord_calls.sh A|B|C|D" >&2; exit 2 ;;
esac
