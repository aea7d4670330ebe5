#!/usr/bin/env bash
# Every chapter re-recorded on the H200, and every timing verdict reproduced, in four chained
# device calls of under 600 s each, A, B, C, E in that order: benchmarks/gpu_wave.sh runs the steps;
# B, C and E restore the reference file the call before wrote, so 99, run last, reads every chapter's
# fresh record. Make each call the moment the one before returns: the machine stays warm 30 s, and a
# call that lands on a fresh one prints "chain: no earlier call's reference file".
#
# The budget (the session holds 1,800 s of device time, cold start included; plan from this table):
#   call  steps                                            2026-12-04 18:55 (s)  2026-12-05 03:50 (s)
#   A     smoke chase, 00, repro 04, 04, 03, 02, repro 03,  404                   514 (a host ~1.5x slower;
#         repro 02 (reordered 17:38: each repro before its page)                        held 696 with its cold start)
#   B     repro 08, 08                                     483 (repro 336, 08 135)  546 (repro 398 of its 400 s
#                                                                                       limit, 08 142 of 150; cold)
#   C     repro 05, 05                                     386 (repro 266, 05 108)  not run
#   E     09, 06, repro 07, 07, 99, audit tests            295                   not run (L 14 s, 09 alone 76 s)
#   held in all (calls + cold starts + gaps)               1,628 (172 s left)    1,694 for A, B, L, 09 (+91 s: a
#                                                                                       call that found no machine)
# 2026-12-05: a cold start cost 100-180 s outside the command, twice in one session, and a call that
# finds no machine 91 s and a ten-minute back-off: A+B+C+E (~1,900 s held today) no longer fits one
# session. The plan for the next one, after review 2026-12-05p's fixes: A, B-repro, E-08 (~1,450 s of
# commands + one cold start), then C in the session after. A runs whole again: 02's C5b/C5c form
# changed (a reproduce record on the old form reads "NOT reproduced (on another form)"), and a
# record older than its page reads "reproduced on earlier sources" (review 2026-12-05p2 00-04
# item 1). B-repro reproduces 08 on its new ladder (the retried CUDA Graphs step), then round p's
# probes; E-08 is 08's page then E-lean (09, 06, reproduce 07, 07, 99). B-repro's runs also record
# what Inductor's runtime autotuning kept in each process (autotune_picks): its summary line says
# whether the compiled rungs' device time, which varied between the 2026-12-05 runs while the
# eager rungs' held, may come from each compile keeping other configs. D3 (issue 41) comes after. 05 waits for C (issue 39
# needs 05 and 07 reproduced together). If a call finds no machine, keep A and B-repro; E-08's 99
# then waits too (test_ledger_copies lists what its H200 copy shows stale).
# 2026-12-05 09:02-11:10: no call found a machine (seven tries, 91 s each, 721 s of the 1,800 s
# spent on nothing; sessions beside this one were refused too): the plan above stands as it is.
# gpu_wave.sh now stops a wave meant for the H200's file on any other card ("wrong card", rc 3),
# before installing anything: then give_back (a later call would reach the same warm H100) and
# call again; the plan is unchanged, one call later.
# 2026-12-05 11:45-14:10: ten calls for nvidia-h200 (11:46-14:09) and one for nvidia-h100-x1 found no
# machine (917 s of the 1,800 spent on nothing): the plan stands, A first.
# 2026-12-05 14:46-15:40: three calls found no machine and two were refused during the back-off
# (about 15 s each, yet the budget fell ~100 s for each); the fourth was served an H100 (rc 3, "wrong
# card", 0.4 s): S ran on it warm (520 s; results/h100_smoke/), then its CUDA tests with -n 8 (165 s).
# 449 s were left: too few for A (~514 s plus a cold start). The plan stands, A first.
# 2026-12-05 17:38-18:08 (after one call at 17:10 found no machine and one was refused in the
# back-off): A 429 s (cold start in its 700 s held), B-repro 364, E-08 323, 05's page alone 96 (C's
# reproduce 05, ~270-360 s, did not fit the 393 s left), then CUDA test files in three calls (22,
# 28, 100 s; results/h200_probes/gpu_pytest_2026-12-05.log). Review 2026-12-05t's fixes then changed
# 00, 02, 03, 04, 07 and 08 (08's keep rule: a moved base read over its own step from the rung's
# images/s, which run 1's CUDA Graphs step failed). Next session, in order: A (its reproduce runs now
# before their pages), B-repro (08 reproduced on the new rule), E-08, then C (reproduce 05, 05) and
# D3 (issue 41) as the budget allows; ch08's CUDA tests were never run on the H200 (T).
# 2026-12-05 20:20 (session u): no machine was lent at all ("no new device machine is lent at
# present"); review 2026-12-05t's measured items were built on the CPU instead (03's b16 lesson and
# reproduce, 04's recompile sweep at 2^25 + k*1024, its C18 sweep before any profiler with graph
# replay on the device, its loop host column; 02's buffer against the L3; 01's computed C8c
# takeaway; 08/09's BatchNorm trade and the audit's clocks), none yet run on a GPU. Next session, in
# order: A (now with 01: its page changed), B-repro, E-08 (without 06: unchanged since 17:38),
# C-repro (reproduce 05 alone: its page is current), L (99 reading them all), then D3 and T.
# 2026-12-05 22:35-00:35 (session w): twelve H200 calls, eleven found no machine (91 s each, 15 s a
# refusal in the back-off), one was served an H100 ("wrong card"): S ran on it warm (294 s;
# results/h100_smoke/2026-12-05_2320/), and its review (docs/reviews/2026-12-05w-h100-smoke-03-04.md)
# changed 03 and 04 again (04's loops by clocks.interleaved_loops, 03's lesson on both launches
# read); four S2 calls (03, 04 on an H100) found none. Next session, as before: A (A2 if
# failed calls leave 500-700 s), B-repro, E-08, C-repro, L, then D3 and T.
# 2026-12-06 01:28-03:05 (session x): thirteen H200 calls, ten found no machine or were refused,
# two were served an H100 (S2 and T ran on it: results/h100_smoke/2026-12-06_0203/, 529 CUDA
# tests passed); the thirteenth found an H200: A34 (250 s), then 00 and 01 (51 s), then the chase,
# reproduce 02 and 02 (129 s) on the warm machine, 62 s left. 03's page read 1,507 core words and
# was cut after, and review 2026-12-06b changed 01, 02 (quiz text) and 04 (the replay bound); next
# session, in order: A (00-04 with reproduce 02-04, ~450 s; 00 is current, but A's order has it
# first for the ceilings), B-repro, E-08 (with 99), C-repro, then D3; L (99) at the end if E-08
# did not run it.
# 2026-12-06 04:19-05:10 (session y): two H200 calls found no machine (91 and 180 s), three were
# served an H100 ("wrong card"); on the first, 00, 02 and 04 ran as a smoke (160 s;
# results/h100_smoke/2026-12-06_0447/), the others were given back at once. The plan is unchanged:
# A first (00-04 all changed again after review 2026-12-06b items 3-12), then B-repro, E-08, C-repro.
# 2026-12-06 06:41-07:05 (session z): an H200 at once: A (414 s), B-repro (318), E-08 with 06 (351),
# then reproduce 05, 05 and 99 (316): every chapter re-recorded on 0a3720e; 02-04, 07 and 08
# reproduced 3 of 3, 05 NOT (the plateau's arithmetic held in 1 of 3: the step drifted upward
# within its rounds in two runs). Review 2026-12-06z then changed 01, 02 and 04; the call to
# re-record them was served an H100 (smoke only: results/h100_smoke/2026-12-06_0835/). Review
# 2026-12-06z's fixes then changed 00 and 03 too, and 05's plateau is now timed round by round
# (its item 2). Next session, in order: A (~450 s: 00-04, reproduce 02-04), then C (~300 s:
# reproduce 05, then 05's page: the reproduce must run the round-by-round check), then 06's page
# (~26 s: review 2026-12-06z 05-07 item 12 changed its text) and L (99, ~10 s, reading them all),
# then D3 (issue 41). 07-09 are current on 0a3720e.
# 2026-12-06 09:26-10:05 (session aa): two calls were served an H100 (on the second, 05 and 00 ran as a
# smoke: results/h100_smoke/2026-12-06_0930/), then an H200: A (440 s), C (318 s: 05 NOT reproduced,
# the plateau's round-by-round call "not resolved" in 3 of 3), 06 and 99 (41 s), D3 (357 s: the wide
# tuning rung 35,099-35,203 images/s gated in 3 of 3, but not kept: 1.006-1.016x over its base, under
# the 2% rule). The fresh 02 and 03 GPU pages read 1,515 and 1,532 core words; cut since (labkit),
# with 05's plateau in 8 rounds and 07's optional names; a last call got an H100 (smoke of 03, 02, 07:
# 1,498, 1,497 and 1,372 core words, before 03's C7 split). Later that session 00, 05, 06 got five
# takeaways (they had six), 03 its C7 split, 09 a CPU fold. Next session, in order: A23 (~320 s: 00,
# reproduce 03, 03, reproduce 02, 02, 99), C (~330 s: reproduce 05, 05, now 8 rounds), E7 (~215 s:
# reproduce 07, 07, 06, 09, 99): ~870 s of commands; then B-repro and 08's page (~450 s) if the budget
# allows (08's past_view changed: every lever's 08-past check, one file a lever; its page re-recorded
# without its reproduce would read C24 "reproduced on earlier sources"). 01 and 04 are current on b5f96c8.
# 05 and 07's reproduce compare their runs with the recorded page; each runs before its page in the
# same call (the page cites the fresh runs), so re-judge it against the fresh page after taking C / E:
#   .venv/bin/python -c 'import json; from labkit.chapters.ch05_dataloader import reproduce as r; d=json.load(open("results/reproduce/nvidia-h200-05_dataloader.json")); print(chr(10).join(r.summarise_numbers(d["numbers"])["lines"]))'
# (ch07_export_traps in place of ch05_dataloader for 07).
#   usage (repo root on the GPU machine, carry [".whl", ".gpu_cache"]):  bash benchmarks/rerecord_calls.sh A|A23|E7|Az|A0|A34|A3|A2|A1|B|C|C-repro|E|E-lean|B-repro|E-08|L|E2|D1|D2 <lever>|D3|F|S|S2|T
#   between calls, here:  bash scripts/take_wave.sh <files_at of the call just returned> A|B (~10 s):
#   the next call then carries every fresh record and the ceilings, warm machine or fresh; when
#   seconds count, bash scripts/carry_ceilings.sh <files_at> (0.1 s) takes only the ceilings.
# After the last call is taken: re-execute every CPU copy here (they quote the recorded H200 lines,
# e.g. 00's hot copy and 02's chase, and would cite the superseded record otherwise; ~4 min):
#   for f in notebooks/[0-9]*.py; do OMP_WAIT_POLICY=PASSIVE .venv/bin/python scripts/execute_notebook.py $f; done
# then tests/notebooks/test_output_words.py and test_h200_copies.py (review 2026-12-05o 00-02 item 4).
# History: 2026-12-04 13:37, B and C ran before A, so 99's copy read 05's morning records (not
# chained): run them A, B, C, E. 16:01: reproduce 08 cut at its 360 s step limit (400 s now).
set -uo pipefail
nb() { echo "python3 scripts/execute_notebook.py --output-dir \$WAVE_OUT/nb --cell-seconds \$WAVE_OUT/cells-$1.json notebooks/$1*.py"; }
repro() { echo "python3 benchmarks/reproduce.py $1 --runs 3"; }
case "${1:-}" in
  A)  # ~450 s (429 on 2026-12-05 17:38, without 01, last since 2026-12-05u: its C8c takeaway is computed): 00 first, whose full ceiling sweep every later chapter reads from the cache (on
      # 2026-12-03 03 ran before 00 and showed other ceilings: TF32 362 against 379); 04
      # reproduced before 04 so its page quotes the fresh record; then 01-03, 06 (its
      # opt-in ResNet-50 DDP run recorded for every other page), 07
    # 2026-12-04 16:00 session: 01 is left out (its page and sources unchanged since its 13:37
    # record, not in NOT_YET_RERECORDED), and 06 moved to E with 07: the session's 1,800 s held
    # A+B+C+E with ~100 s of start and gaps only so (13:37: 1,681 s of calls, 1,783 held)
    # 2026-12-05o: first, 02's Triton chase compiled and its end index checked (~10 s,
    # benchmarks/smoke_chase.py); where that fails, 02 runs with LABKIT_SKIP_CHASE=1 (the chase is
    # optional and decides no verdict; a CUDA fault inside it would be sticky and lose 02's later
    # cells and its record) and steps.txt shows the smoke step's rc 1 (review 2026-12-05o 00-02 item 2);
    # its own 60 s limit makes a hung compile a failed smoke, not a step killed before it could say so (o2 item 2)
    # 2026-12-05 17:38: 03's page ran before reproduce 03 and set its eager loops beside the
    # 03:56 record's fresh processes, not the call's own; each chapter is now reproduced first,
    # as 04 was, so its page quotes the fresh runs
    STEP_TIMEOUT=240 bash benchmarks/gpu_wave.sh \
      "timeout 60 python3 benchmarks/smoke_chase.py || { touch \$WAVE_OUT/chase_failed; exit 1; }" \
      "$(nb 00)" "$(repro 04)" "$(nb 04)" "$(repro 03)" "$(nb 03)" "$(repro 02)" \
      "LABKIT_SKIP_CHASE=\$(test -e \$WAVE_OUT/chase_failed && echo 1 || echo 0) $(nb 02)" "$(nb 01)" ;;
  Az) # ~250 s (session z's timings: reproduce 04 51 s, 04 55, 01 16, reproduce 02 81, 02 35, 99 8):
      # the pages review 2026-12-06z changed (01, 02, 04), each reproduced before its page, then 99
    STEP_TIMEOUT=200 bash benchmarks/gpu_wave.sh "$(repro 04)" "$(nb 04)" "$(nb 01)" "$(repro 02)" \
      "$(nb 02)" "$(nb 99)" ;;
  A23) # ~320 s (session aa's timings: 00 31 s, reproduce 03 86, 03 61, reproduce 02 86, 02 41; 99 8): 00
      # first (its five takeaways; the ceilings every later page reads), then 03 and 02 after session
      # aa's cuts (their GPU pages' words) and 03's C7 split (C7b's GPU path has never run on a GPU),
      # each reproduced before its page, then 99 reading them
    STEP_TIMEOUT=200 bash benchmarks/gpu_wave.sh \
      "timeout 60 python3 benchmarks/smoke_chase.py || { touch \$WAVE_OUT/chase_failed; exit 1; }" \
      "$(nb 00)" "$(repro 03)" "$(nb 03)" "$(repro 02)" \
      "LABKIT_SKIP_CHASE=\$(test -e \$WAVE_OUT/chase_failed && echo 1 || echo 0) $(nb 02)" "$(nb 99)" ;;
  E7) # ~215 s (session z: reproduce 07 ~75 s, 07 28 s, 06 25, 09 72, 99 7): 07 on session aa's optional-
      # names fix, reproduced before its page; 06 (five takeaways) and 09 (its CPU branch folded); then 99.
      # CHAIN=1 after A23/C on a warm machine
    CHAIN=1 STEP_TIMEOUT=200 bash benchmarks/gpu_wave.sh "$(repro 07)" "$(nb 07)" "$(nb 06)" "$(nb 09)" "$(nb 99)" ;;
  A0) # ~200-250 s of commands (estimate: 00 28-38 s, reproduce 02 ~90-120, 02 37, 01 ~20; the chase
      # ~10): A's chapters that review 2026-12-06 did not change (00, 02 with its chase, 01), for a
      # machine that comes while 03 and 04's fixes are being made; those two follow in A34
    STEP_TIMEOUT=240 bash benchmarks/gpu_wave.sh \
      "timeout 60 python3 benchmarks/smoke_chase.py || { touch \$WAVE_OUT/chase_failed; exit 1; }" \
      "$(nb 00)" "$(repro 02)" \
      "LABKIT_SKIP_CHASE=\$(test -e \$WAVE_OUT/chase_failed && echo 1 || echo 0) $(nb 02)" "$(nb 01)" ;;
  A34) # ~300-340 s of commands (H100 2026-12-06: 04 75 s, 03 68; each reproduce ~90-120): 04 and 03
      # re-recorded on review 2026-12-06's fixes, each reproduced before its page (after A0)
    STEP_TIMEOUT=240 bash benchmarks/gpu_wave.sh "$(repro 04)" "$(nb 04)" "$(repro 03)" "$(nb 03)" ;;
  A3) # ~140 s of commands (2026-12-06: reproduce 03 78 s, 03 62 s): 03 alone, reproduced before its page
    STEP_TIMEOUT=240 bash benchmarks/gpu_wave.sh "$(repro 03)" "$(nb 03)" ;;
  A2) # ~330-370 s of commands (2026-12-05 23:20 H100 smoke: 00 28 s, 04 51, 03 58; each reproduce
      # ~90-120): A's first half, for a session whose failed calls left 500-700 s: 00, 04 and 03
      # re-recorded on their final sources, each reproduced before its page; 02 (with the chase) and
      # 01 wait for a call with the time
    STEP_TIMEOUT=240 bash benchmarks/gpu_wave.sh \
      "$(nb 00)" "$(repro 04)" "$(nb 04)" "$(repro 03)" "$(nb 03)" ;;
  A1) # ~200 s of commands (estimate from the 03:50 record: 00 38, reproduce 04 ~90, 04 61), for a session
      # with under ~600 s left: 00 and 04 re-recorded on their final sources, 04 reproduced first;
      # A's 03, 02 (and the chase's smoke run, which only 02 reads) wait for a call that has the time
    STEP_TIMEOUT=240 bash benchmarks/gpu_wave.sh "$(nb 00)" "$(repro 04)" "$(nb 04)" ;;
  B)  # ~490 s (483 at 18:55): reproduce 08 first (2026-12-04 16:09: 118.5 and 119.6 s a run, so its 360 s step
      # limit cut run 3: 400 s now), so the page's note reads this call's fresh ranges
      # (2026-12-04i 08 item 1), then 08 (137 s at 16:17, limit 150). 09 (86 s) moved to E.
      # After taking B, before the page is read as the record: over the 3 runs in
      # results/reproduce/nvidia-h200-08_inference_ladder.json, read the fp16 rung's idle share and
      # CUDA Graphs' 'kept' (review 2026-12-04n 08-09-99 item 1; 2026-12-05o item 6d), and run
      # tests/notebooks/test_output_words.py -k 08 on the fresh H200 copy.
    CHAIN=1 STEP_TIMEOUT=400 bash benchmarks/gpu_wave.sh "$(repro 08)" "$(nb 08)" ;;
  C)  # ~390 s (386 at 18:55): reproduce 05 first, so the page quotes this call's fresh runs (2026-12-04 07:09: the
      # page ran first and said "not yet reproduced" of sources its reproduce, minutes later, did
      # not reproduce), then 05 (its cell seconds and fresh-batch step recorded by the chapter
      # itself). 2026-12-04 13:47: reproduce 05 363 s (109-132 s a run) and 05 147 s: with
      # reproduce 07 and 99 behind them the call ran past 600 s, so those two moved to E.
      # Probes for a call with time left: benchmarks/gpu_05_warmup.py (~30 s), gpu_05_issue39.py
      # (~120 s), gpu_05_other_cells.py (~60 s, if 05 ran over 120 s), gpu_host_mode.py (08's host pace)
    CHAIN=1 STEP_TIMEOUT=420 bash benchmarks/gpu_wave.sh "$(repro 05)" "$(nb 05)" ;;
  E)  # ~330-350 s (295 at 18:55), last: 09 (86 s at 16:18), 06, 07, reproduce 07 (about 75 s, within 600 s of 07's
      # page), then the ledger, reading every chapter's fresh record (and results/reproduce/: every
      # reproduce above runs before it). Chained: take C's wave into the tree first
      # (scripts/take_wave.sh), so a fresh machine reads it too. A+B+C+E ~1,660 s of calls.
      # 06's opt-in ResNet-50 DDP run (LABKIT_DDP_RESNET50=1) is not asked here: since bfbfdce it
      # adds an A/A pair and a no_sync() split (132 steps, about twice the 46 s of 13:37), more
      # than the session's 1,800 s leave; give it a call of its own (E2) when seconds remain, before 99.
      # 2026-12-04n: reproduce 07 before 07, as 05's in C, so the page cites this call's runs, not a
      # record gone by then (review 2026-12-04m 05-07 item 8); re-judge it against the fresh page after
      # taking E (the one-liner above, ch07_export_traps in place of ch05_dataloader). Then the audit's
      # host-bound test under CUDA (~20 s, review 2026-12-04m 08-09-99 item 11), logs under wave/audit_evidence/.
      # Expected (2026-12-04n, estimates, not measured): 09 ~96 s (its float16 audit times BatchNorm float32 too),
      # 06 ~40 s (variant g), reproduce 07 ~110-130 s (Trap 2 and the speed table timed as loops; 98 s at
      # 18:55), 07 ~42 s, the audit tests ~25 s (6 of them), 99 ~10 s: ~330-350 s, each step under its 200 s.
      # The audit tests run after 99 (review 2026-12-05o 08-09-99 item 2): 99 reads nothing they write,
      # so a short session loses the evidence, not the ledger.
    CHAIN=1 STEP_TIMEOUT=200 bash benchmarks/gpu_wave.sh "$(nb 09)" "$(nb 06)" "$(repro 07)" "$(nb 07)" \
      "$(nb 99)" "bash benchmarks/gpu_audit_evidence.sh tests" ;;
  E-lean)  # ~310-325 s: E without the audit's GPU tests (they move to F), when budget_left is short
    CHAIN=1 STEP_TIMEOUT=200 bash benchmarks/gpu_wave.sh "$(nb 09)" "$(nb 06)" "$(repro 07)" "$(nb 07)" "$(nb 99)" ;;
  B-repro)  # ~400-480 s: reproduce 08 alone (398 s on 2026-12-05); a not-decidable step's retry
      # (~26 s with the batch step after it) begins only where it fits before 150 s of a run
      # (reproduce.LADDER_END_S, the page's own end), so a run lasts at most ~160 s with start-up;
      # its page moves to E-08
      # Then round p's probes (~40 s; each under its own timeout): the profiler-tax hypothesis
      # behind 03/04's slower host figures, and 00's 1 GiB cache point other ways. Copy
      # wave/profiler_tax/*.json to results/h200_probes/ by hand after taking the wave.
    CHAIN=1 STEP_TIMEOUT=540 bash benchmarks/gpu_wave.sh "$(repro 08)" \
      "timeout 60 python3 benchmarks/probe_profiler_tax.py --measure --out \$WAVE_OUT/profiler_tax" \
      "timeout 40 python3 benchmarks/probe_00_cache_point.py" ;;
  E-08)  # ~420 s (estimate): 08's page (142 s on 2026-12-05, limit 150) after its reproduce in B-repro,
      # then E-lean: 09 reads 08's keep rule, 99 reads every record
      # 2026-12-05u: 06 left out (its page and sources unchanged since its 17:38 record; ~28 s saved)
      # 2026-12-06z: 06 back in (session y changed its quiz and card cut), before 99
    CHAIN=1 STEP_TIMEOUT=200 bash benchmarks/gpu_wave.sh "$(nb 08)" "$(nb 09)" "$(repro 07)" \
      "$(nb 07)" "$(nb 06)" "$(nb 99)" ;;
  C-repro)  # ~270-360 s: reproduce 05 alone, where 05's page is current (recorded 2026-12-05 18:05 on the
      # same sources: its record is then after the verdict, so the runs count); after it, L (99)
    CHAIN=1 STEP_TIMEOUT=420 bash benchmarks/gpu_wave.sh "$(repro 05)" ;;
  L)  # ~20-30 s of work, the ledger alone: after a session whose budget held some calls and not the
      # rest (2026-12-05: A and B ran, C and E did not), 99's H200 copy re-read against the records
      # those calls wrote, so it shows no superseded row; E's 99 re-records it again later
    CHAIN=1 STEP_TIMEOUT=120 bash benchmarks/gpu_wave.sh "$(nb 99)" ;;
  E2) # ~120 s, optional, before E's 99 if run: 06 with its ResNet-50 DDP run
    CHAIN=1 STEP_TIMEOUT=240 bash benchmarks/gpu_wave.sh "LABKIT_DDP_RESNET50=1 $(nb 06)" ;;
  D1) # issue 41: one process times the Triton rungs and the prologue rungs (fused_prologue.py: each
      # 3x3's bias + ReLU applied by the next GEMM as it loads its operand), each interleaved with the
      # rung it changes, gated, profiled. Ran 2026-12-05 in 155 s on a fresh machine (the record:
      # results/h200_past_defaults/past_defaults_prologue.*, copied there from wave/pd_prologue/):
      # the prologue at batch 1024 34,634 images/s, the best gated rung; D2 then reproduced the batch
      # 2048 lever built on it (results/reproduce/nvidia-h200-08_past_defaults-triton-prologue-at-batch-2048.json: NOT reproduced
      # at 35,000, 0 of 3; the prologue at 1024 34,499-34,670 in the same runs). Run it again only
      # after a change to those rungs.
    SKIP_INSTALL=1 STEP_TIMEOUT=480 bash benchmarks/gpu_wave.sh \
      "python3 benchmarks/gpu_past_defaults.py --out \$WAVE_OUT/pd_prologue --budget 400 --no-shapes --levers 'Triton fused epilogue, compiled,Triton compiled at batch 1024,Triton prologue, compiled,Triton prologue at batch 1024'" ;;
  D2) # issue 41's check (~370-430 s; 365 s on 2026-12-05 for batch 2048): the lever named as the second
      # argument (e.g. 'Triton prologue at batch 1024'), in three fresh processes judged by reproduce.py 08-past
      # (gated, >= 35,000 images/s in every run, spread <= 5%; exit 1 = not reproduced; then the note
      # gives what bound it from the runs' profiles). Then INT8 timed once (~45-60 s; --budget 90: a
      # cold top rung takes ~15 s of it, review 2026-12-05o 08-09-99 item 6e): copy
      # wave/pd_int8/past_defaults.json to results/h200_past_defaults/past_defaults_int8.json.
    # --budget 240 a run: a prologue lever brings its bases (batch 1024, the Triton rung, and for
    # the last two the prologue rung at 1024), whose est_s add up past reproduce's default 130 s
    lever=${2:?usage: bash benchmarks/rerecord_calls.sh D2 '<lever name>'}
    SKIP_INSTALL=1 STEP_TIMEOUT=480 bash benchmarks/gpu_wave.sh \
      "python3 benchmarks/reproduce.py 08-past --levers '$lever' --runs 3 --budget 240" \
      "python3 benchmarks/gpu_past_defaults.py --out \$WAVE_OUT/pd_int8 --budget 90 --no-shapes --levers 'INT8 per-channel weights'" ;;
  D3) # issue 41's next lever (~380-570 s, estimated, not measured; after A, B-repro, E-08 and C have
      # run, or in a session they do not need): the prologue rung at batch 1024 with the autotuner
      # choosing from 12 tile configs instead of 5 (fused_epilogue.WIDE_EXTRA_CONFIGS; checked under
      # Triton's interpreter: results/h200_past_defaults/cpu_triton_interpret_wide_extra.json), timed
      # interleaved with that rung, gated, profiled (the best rung's longest kernels now reach the
      # record), in three fresh processes judged by reproduce.py 08-past as D2 judges its lever.
      # --budget 300 a run: its bases (batch 1024, the Triton and prologue rungs at 1024) ~110 s
      # (D2's runs took 112-122 s with the batch-2048 lever), the lever ~60 s on a cold Triton
      # cache. The runs share one Triton cache (TRITON_CACHE_DIR, which gpu_past_defaults.py keeps
      # where set; each gets its own Inductor cache), so runs 2 and 3 find run 1's compiled
      # kernels: only their compile seconds change, not the images/s judged, and the record's note
      # must say the runs shared compiled Triton kernels (review 2026-12-05q2 item 1). --timeout
      # 190 a run: three fit the step's 590 s, and a stuck run is cut by reproduce.py, which says
      # so, not by the step's kill.
    SKIP_INSTALL=1 STEP_TIMEOUT=590 bash benchmarks/gpu_wave.sh \
      "TRITON_CACHE_DIR=/tmp/triton_d3 python3 benchmarks/reproduce.py 08-past --levers 'Triton prologue b1024, wide tuning' --runs 3 --budget 300 --timeout 190" ;;
  F)  # evidence no chapter page prints, for a call with seconds left after D1, D2 (each estimated, not measured):
      # 06's ResNet-50 DDP run is E2; here the audit's AOTInductor on chapter 07's small network (~135 s,
      # review 2026-12-04m 08-09-99 item 11; logs to results/h200_probes/audit/ by hand), 00's first-call
      # records renewed (benchmarks/harness_parity.py; the CPU page shows them dated 2026-12-03; review
      # 2026-12-04n 00-02 item 7), and 05's A/A probe of four identical loaders (~45 s, issue 39).
      # After E-lean, the audit's GPU tests too (~25 s): bash benchmarks/gpu_audit_evidence.sh tests.
    CHAIN=1 STEP_TIMEOUT=300 bash benchmarks/gpu_wave.sh "bash benchmarks/gpu_audit_evidence.sh aoti" \
      "python3 benchmarks/harness_parity.py \$WAVE_OUT/harness_parity --record-as nvidia-h200" \
      "python3 benchmarks/probe_05_aa.py --out \$WAVE_OUT/probe_05_aa --rounds 4" ;;
  S)  # ~370 s (520 s on an H100, 2026-12-05, with a test step since moved to T that its 150 s cut short): a
      # smoke run of the sources changed since the last record
      # on a card that is not the reference, e.g. nvidia-h100-x1 while no H200 comes (2026-12-05: 20 H200
      # calls in three sessions found none). Nothing lands in the H200's file: REFERENCE=nvidia-h100
      # writes results/nvidia-h100.json, and take_wave.sh is not used; the call says whether the
      # current sources run on a Hopper GPU (02's chase, 00, 02, 03, 04, 08 top to bottom), not what
      # the H200 measures. Copy wave/steps.txt and each page's verdicts to results/h100_smoke/ by hand.
    REFERENCE=nvidia-h100 STEP_TIMEOUT=200 bash benchmarks/gpu_wave.sh \
      "timeout 60 python3 benchmarks/smoke_chase.py || { touch \$WAVE_OUT/chase_failed; exit 1; }" \
      "$(nb 00)" "$(nb 04)" "$(nb 03)" \
      "LABKIT_SKIP_CHASE=\$(test -e \$WAVE_OUT/chase_failed && echo 1 || echo 0) $(nb 02)" "$(nb 08)" ;;
  S2) # ~110 s (H100, 2026-12-05 23:20: 04 51 s, 03 58 s): S for 03 and 04 alone, where they changed
      # after the last smoke run and the session's budget holds no more (REFERENCE=nvidia-h100, as S)
    REFERENCE=nvidia-h100 STEP_TIMEOUT=200 bash benchmarks/gpu_wave.sh "$(nb 04)" "$(nb 03)" ;;
  T)  # ~300-450 s (estimate: the 6 files of the H100's 7 failures took 130 s alone, one test at a time;
      # all such files took 160 s with 8 workers, whose shared GPU failed a launch-bound check): the
      # test files with CUDA cases (addopts off: no nbval there), 4 workers, one call
    REFERENCE=nvidia-h100 STEP_TIMEOUT=560 bash benchmarks/gpu_wave.sh \
      "timeout 540 python3 -m pytest -q -rfs -n 4 -o addopts= -p no:cacheprovider --continue-on-collection-errors \$(grep -rlE 'cuda.is_available|mark.gpu' tests --include='test_*.py') > \$WAVE_OUT/gpu_pytest.log 2>&1; rc=\$?; grep -E '^(FAILED|ERROR)|passed|failed' \$WAVE_OUT/gpu_pytest.log | tail -20; exit \$rc" ;;
  *) echo "usage: bash benchmarks/rerecord_calls.sh A|A23|E7|Az|A0|A34|A3|A2|A1|B|C|C-repro|E|E-lean|B-repro|E-08|L|E2|D1|D2 <lever>|D3|F|S|S2|T" >&2; exit 2 ;;
esac
