#!/usr/bin/env bash
# Between two device calls (seconds count: the machine stays warm 30 s): take the measured
# ceilings a call brought back (wave/gpu_cache/) into .gpu_cache, so the next call, carried with
# [".whl", ".gpu_cache"], reads chapter 00's sweep even when it lands on a fresh machine
# (2026-12-04: call B did, and 08 measured fp16 720 TFLOP/s against 00's 751 in call A).
#   usage: bash scripts/carry_ceilings.sh FILES_AT
set -euo pipefail
tmp=$(mktemp -d)
tar xzf "$1/wave.tar.gz" -C "$tmp" --wildcards 'wave/gpu_cache/*'
mkdir -p .gpu_cache && cp "$tmp"/wave/gpu_cache/ceilings-*.json .gpu_cache/ && ls .gpu_cache
rm -rf "$tmp"
