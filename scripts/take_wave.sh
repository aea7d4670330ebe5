#!/usr/bin/env bash
# Take one device call's wave.tar.gz (benchmarks/gpu_wave.sh) into the tree: the chapters it
# executed (wave/nb/*.ipynb) are merged into results/nvidia-h200.json and results/h200_notebooks/
# by scripts/merge_reference.py; reproduce results and other benchmark outputs the call's steps
# wrote under results/ (their logs name them), or under $WAVE_OUT/repro*, are copied over. Prints each step's status line.
# The commit the call ran on is written beside the copies (results/h200_notebooks/SOURCES.json):
# HEAD when taken, or COMMIT when given; so commit, call, take, and only then commit more.
#   usage: bash scripts/take_wave.sh FILES_AT [NAME [COMMIT]]
set -euo pipefail
files_at=$1; name=${2:-$(date +%H%M%S)}; commit=${3:-}
dir=/tmp/wave-$name
rm -rf "$dir" && mkdir -p "$dir" && tar xzf "$files_at/wave.tar.gz" -C "$dir"
cat "$dir/wave/steps.txt" 2>/dev/null || true
if ls "$dir"/wave/nb/*.ipynb >/dev/null 2>&1; then
  mkdir -p "$dir/run" && ln -sfn "$dir/wave/nb" "$dir/run/notebooks"
  cp "$dir/wave/results/nvidia-h200.json" "$dir/run/nvidia-h200.json"
  .venv/bin/python scripts/merge_reference.py "$dir/run" ${commit:+--commit "$commit"}
fi
# Only what this call's steps wrote ("wrote .../results/<sub>/<file>" in a step's log): the
# wave's results/ also holds the repo's own older copies, which must not overwrite a newer
# record taken from an earlier call (they did once: B's and C's copies undid A's reproduce runs)
grep -ho "wrote [^ ]*/results/[a-z0-9_]*/[^ ]*\.json" "$dir"/wave/step*.log 2>/dev/null | sed 's#.*/results/#results/#' | sort -u |
  while read -r written; do
    if [ -f "$dir/wave/$written" ]; then cp "$dir/wave/$written" "$written" && echo "took $written"; fi
  done
# reproduce runs written to $WAVE_OUT/reproNN (reproduce.py --out "$WAVE_OUT/reproNN") land there too
for folder in "$dir"/wave/repro*/; do
  if ls "$folder"*.json >/dev/null 2>&1; then cp "$folder"*.json results/reproduce/; fi
done
# the ceilings the call measured or read, for the next call to carry (.gpu_cache, git-ignored)
if ls "$dir"/wave/gpu_cache/ceilings-*.json >/dev/null 2>&1; then
  mkdir -p .gpu_cache && cp "$dir"/wave/gpu_cache/ceilings-*.json .gpu_cache/ && echo "took the ceilings into .gpu_cache"
fi
git status --short results | head -30
echo "extracted to $dir/wave"
