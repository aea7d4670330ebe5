#!/usr/bin/env bash
# AOTInductor in the audit, on the reference GPU: the record no session has made yet (review
# 2026-12-04i, chapters 08-09-99, item 6; issue 40 asks for "AOTInductor run on the GPU (the
# path chapter 07 found silently wrong) instead of skipped"). Chapter 09 leaves AOTInductor to
# the command: its C++ and Triton compile alone took 72 s for chapter 07's small network on the
# H200 (128 s with export and load), past what 09's 120 s could add to its 69 s. This records
#
#     python -m labkit.audit torchvision:resnet50 --exports aoti
#
# with a 540 s compile limit (the CLI's default on a GPU is 100 s, which ResNet-50 may not
# meet), in one device call of under 600 s, through benchmarks/gpu_wave.sh (its tarball and
# step log). The audit prints its time by phase (exports = AOTInductor's export, compile, load).
#
#   usage (repo root on the GPU machine, torchvision installed; no carry needed):
#     bash benchmarks/gpu_audit_aoti.sh
#   then here: the report is wave/audit_aoti/report.md in the returned wave.tar.gz; commit it
#   as results/h200_probes/audit/audit_resnet50_aoti.md with the step log (wave/step1.log:
#   the text report and the seconds), and quote its AOTInductor row where 09 names the command.
#   What to look for: the AOTInductor row's outcome on channels_last (the audited layout) and
#   on NCHW / the transposed view, its note (export, compile, load seconds), and whether the
#   compile met the limit ("did not compile within 540 s" otherwise: raise LABKIT_AOTI_TIMEOUT_S).
set -uo pipefail
export LABKIT_AOTI_TIMEOUT_S=${LABKIT_AOTI_TIMEOUT_S:-540}
SKIP_INSTALL=1 STEP_TIMEOUT=${STEP_TIMEOUT:-590} bash benchmarks/gpu_wave.sh \
  "python3 -c 'import torch, torchvision; print(torch.__version__, torchvision.__version__, torch.cuda.get_device_name())' && \
   python3 -m labkit.audit torchvision:resnet50 --device cuda --exports aoti --out \$WAVE_OUT/audit_aoti"
