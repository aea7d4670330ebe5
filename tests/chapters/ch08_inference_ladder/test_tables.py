"""What left chapter 08's notebook (tables.py): its tables read the run's numbers, say so when
a part needs a GPU, and re-show the reference GPU's recorded ladder under its recorded key."""

import dataclasses
from types import SimpleNamespace

import pytest

from labkit.chapters.ch08_inference_ladder import keep, ladder, numerics, tables
from labkit.core import results
from labkit.session import Recorded


def rung(name, batch, median_s, after="", kept=True):
    return ladder.Rung(name, ladder.Settings(batch=batch), batch / median_s, median_s, 0.0,
                       0.0, None, after=after, kept=kept)


def cpu_run():
    start, faster = rung("start", 4, 0.4), rung("faster", 4, 0.2, after="start")
    return SimpleNamespace(rungs=[start, faster], strict=start, defaults=start, top=faster,
                           top_at_baseline_batch=faster, regimes={}, regime_bases={}, beyond=[],
                           regime_gains=lambda: {})


def test_the_gate_table_lists_every_precisions_tolerance_and_the_budget_is_the_chapters():
    shown = tables.gate_rules()
    assert shown.column("math") == list(numerics.TOLERANCES)
    assert any("top-1 agreement" in n for n in shown.notes)
    assert any(f"at least {1 + keep.MIN_GAIN:.2f}x" in n for n in shown.notes)  # the minimum gain
    # the budget leaves room for the rung begun before it and the chapter's other cells
    assert tables.budget_s(True) + 30 <= tables.GPU_CHAPTER_TARGET_S
    assert tables.budget_s(False) < tables.budget_s(True)


def test_the_gpu_only_interaction_table_says_why_it_is_empty():
    run = cpu_run()
    assert not tables.regimes_table(run).rows and "No GPU here" in tables.regimes_table(run).notes[0]


def test_the_recorded_ladder_reads_the_reference_record_labelled_recorded():
    entry = (results.load("nvidia-h200") or {}).get("chapters", {}).get("08_inference_ladder", {}).get("ladder")
    if entry is None:
        pytest.skip("nothing recorded under 08_inference_ladder/ladder in results/nvidia-h200.json")
    shown = tables.recorded_ladder(Recorded("08_inference_ladder", "ladder", "nvidia-h200",
                                            entry["payload"], "2026-12-01"))
    assert len(shown.rows) == len(entry["payload"]["rungs"]) and shown.recorded.startswith("recorded on")
    nothing = tables.recorded_ladder(Recorded("08_inference_ladder", "ladder", "nvidia-h200"))
    assert not nothing.rows and "nothing recorded" in nothing.recorded


def test_the_gpu_shaped_interaction_table_reads_each_regime():
    eager_base, graphed_base = rung("eager base", 64, 0.2), rung("graphed base", 64, 0.1)
    fp16 = rung("fp16", 64, 0.1, after="eager base")
    fp16.idle_share = 0.4
    fp16_graphed = rung("fp16", 64, 0.08, after="graphed base")
    regimes = {"eager": {"fp16": fp16}, "compiled + graphs": {"fp16": fp16_graphed}}
    bases = {"eager": eager_base, "compiled + graphs": graphed_base}
    run = SimpleNamespace(regimes=regimes, regime_bases=bases, top=graphed_base,
                          regime_gains=lambda: {r: {n: g.speedup_over(bases[r]) for n, g in s.items()
                                                    if not g.error}  # as Result.regime_gains
                                                for r, s in regimes.items()})
    shown = tables.regimes_table(run)
    assert shown.rows == [["fp16", "2.00x", "1.25x"]]
    assert dict(shown.folded)["idle per cell"] == "fp16, eager: 40%"   # folded (issue 37)
    # why channels_last may gain little compiled: read from Inductor's source, folded (issue 37)
    assert not shown.notes and any("layout_optimization" in text for _, text in shown.folded)
    late = rung("folding", 64, 0.1, after="graphed base", kept=False)
    late.why, late.error = "skipped: out of the run's time budget", "skipped"
    regimes["compiled + graphs"]["folding"] = late
    assert shown.rows == [["fp16", "2.00x", "1.25x"]]       # (the table above)
    assert tables.regimes_table(run).rows[-1] == ["folding", "-", "skipped"]
    run.regimes_missing = {"compiled + graphs, batch 256": "skipped: out of the run's time budget"}
    assert "compiled + graphs, batch 256: not measured (skipped" in tables.regimes_table(run).notes[0]
    nothing = SimpleNamespace(regimes={}, regime_bases={}, regime_gains=lambda: {},
                              regimes_missing={"eager": "skipped: out of the run's time budget"})
    assert "eager: not measured" in tables.regimes_table(nothing).notes[0]   # not "No GPU here"
    # a cell whose base moved in every timing shows its gain as not decidable (review 2026-12-03e item 1)
    fp16.judged_by = keep.NOT_DECIDABLE
    assert tables.regimes_table(run).rows[0][1] == "not decidable (2.00x, its base moved)"


def test_a_cpu_does_not_judge_c24_and_says_which_steps_its_ladder_lacks(capsys):
    """Review 2026-12-03c items 3 and 10: a ladder without JIT compilation does not judge the
    seed's seven steps; the CPU's own strings fit a CPU."""
    from labkit.chapters.ch08_inference_ladder import experiment, roofline

    plan = experiment.plan(False)
    lacks = tables.lacking_steps(plan)
    assert {"torch.compile", "CUDA Graphs", "TF32", "fp16 weights"} <= set(lacks)
    asked = {}
    chapter = SimpleNamespace(on_gpu=False, table=lambda verdicts=None, pending=(): asked.update(
        verdicts=verdicts, pending=list(pending)) or "table")
    assert tables.judge_c24(chapter, None) is None
    assert tables.verdict_table(chapter, None, plan) == "table" and asked["pending"] == ["C24"]
    assert "C24 is not judged here" in capsys.readouterr().out
    run = cpu_run()
    run.plan = plan
    said = tables.takeaways(run, None)
    c24 = next(line for line in said if line.startswith("C24"))
    assert "not judged here" in c24 and "torch.compile" in c24
    assert any(line.startswith("No device clock here") for line in said)
    # a CPU's two baselines are one rung: its speed-up is said once, and the empty interaction
    # table's own note is not repeated as a takeaway
    assert "x eager float32;" in said[0] and "PyTorch's default" not in said[0]
    assert not any("interaction" in line for line in said)
    from labkit.chapters.ch08_inference_ladder import claims

    _, reason, _ = claims.check_c24({"speedup_over_strict": 1.2, "speedup_over_defaults": 1.2,
                                     "top_rung": "folding", "steps_kept": 1}, {"seed_speedup": 4.8})
    assert "1 step kept" in reason
    assert "TF32" not in tables.regimes_table(run).title
    best = rung("best", 16, 0.05)
    best.kinds = {}
    shown = tables.standing_table(best, 32, {"float32": 0.16}, "")
    assert not any("published" in str(r[0]) for r in shown.rows)
    assert any("not set beside this 32-px" in n for n in shown.notes)
    with_bytes = tables.standing_table(best, 32, {"float32": 0.16}, "", copy_gbps=25.0)
    # the memory roof (an estimate) is folded: the page's words (review 2026-12-04j)
    assert dict(with_bytes.folded)["memory roof"].startswith("memory roof (estimate")
    assert roofline.MLPERF_H200_RESNET50_OFFLINE  # (still shown on an H200 run)


def test_the_gpu_form_names_the_courses_reading_not_the_seeds():
    from labkit.chapters.ch08_inference_ladder import experiment

    form = experiment.COURSE_FORM
    assert "course's reading" in form and "the seed names no GPU, baseline, batch or precision" in form
    assert form != "the seed's form"


def test_the_recorded_ladder_says_when_its_record_lacks_the_bases_retiming():
    """Review item 1: a record without each step's base re-timed shows no such column and says
    its gains and the rows' images/s come from different runs; a newer one shows the column."""
    base = {"name": "a", "images_per_s": 100.0, "kept": True, "math": "float32", "compile_s": 0.0,
            "after": ""}
    old = dict(base, name="b", images_per_s=150.0, gain=1.06, gain_spread=[1.03, 1.07], after="a")
    shown = tables.recorded_ladder(Recorded("08_inference_ladder", "ladder", "nvidia-h200",
                                            {"rungs": [base, old]}, "2026-12-03"))
    assert "its base in the step's rounds" not in shown.columns
    assert any("different runs" in n for n in shown.notes)
    new = dict(old, here={"a": {"images_per_s": 141.5, "idle_share": 0.19}}, unstable="IQR 53% > 10%")
    shown = tables.recorded_ladder(Recorded("08_inference_ladder", "ladder", "nvidia-h200",
                                            {"rungs": [base, new]}, "2026-12-03"), fresh=None)
    assert shown.rows[1][3] == "142, 19%" and "unstable: IQR 53%" in shown.rows[1][4]
    assert not any("different runs" in n for n in shown.notes)


def _h200_like(fp16_climb=1.51, fp16_iqr=(1.47, 1.58), fold_iqr_s=0.0001):
    """The H200 page's chain of 21:52 (review 2026-12-03h item 2): TF32, channels_last 1.21x,
    fp16 weights, then CUDA Graphs 1.235x and torch.compile 1.677x BETWEEN fp16 weights and
    Conv-BN folding 1.07x, then batch 256; alone on the eager base: 1.21x, 1.34x, 1.03x."""
    names = [s.name for s in ladder.REGIME_STEPS]
    strict = rung("eager strict float32", 64, 64 / 3165)
    climb = [("TF32", 2.14, (2.14, 2.14)), ("channels_last", 1.21, (1.21, 1.21)),
             ("fp16 weights", fp16_climb, fp16_iqr), ("CUDA Graphs", 1.235, (1.22, 1.32)),
             ("torch.compile", 1.677, (1.67, 1.68)), ("Conv-BN folding", 1.07, (1.07, 1.07))]
    chain, before, rate = [], strict, 3165.0
    for name, gain, spread in climb:
        rate *= gain
        r = rung(name, 64, 64 / rate, after=before.name)
        r.gain, r.gain_spread = gain, spread
        r.here = {before.name: {"images_per_s": before.images_per_s}}
        chain.append(r)
        before = r
    top = chain[-1]
    top.over = {strict.name: (rate / 3165, rate / 3165 - 0.01, rate / 3165 + 0.01)}
    top.iqr_s = fold_iqr_s
    base = rung("eager: TF32 base", 64, 64 / 6772)
    regime = {}
    for name, gain in zip(names, (1.21, 1.34, 1.03), strict=True):
        r = rung(f"eager: + {name}", 64, 64 / (6772 * gain), after=base.name)
        r.over = {base.name: (gain, gain - 0.01, gain + 0.01)}
        regime[name] = r
    run = SimpleNamespace(rungs=[strict, *chain], strict=strict, top=top, regimes={"eager": regime},
                          regime_bases={"eager": base})
    return run, {"eager": {n: r.speedup_over(base) for n, r in regime.items()}}


def test_the_interaction_table_compares_the_three_steps_own_gains_not_the_climbs_rows():
    """Review 2026-12-03h item 2: the three steps alone, multiplied, against the same three
    steps' own gains on the climb, multiplied; never the climb's rows end to end, which on the
    GPU also hold CUDA Graphs and torch.compile (4.08x against 1.67x on the H200 page, of which
    those two were 2.07x). The steps whose ranges part are named with both gains."""
    run, gains = _h200_like()
    said, composed = tables.adds_up_parts(run, gains)
    assert "Alone on the eager base, the three multiply to 1.67x" in said
    assert "their own gains on the climb multiply to 1.95x" in said     # 1.21 x 1.51 x 1.07
    assert "4.0" not in said and "end to end" not in said          # not the rows' 4.08x
    assert "do not overlap (1.17x apart)" in said
    assert "fp16 weights 1.51x on the climb (after channels_last), 1.34x alone" in said
    assert "Conv-BN folding 1.07x on the climb (after torch.compile), 1.03x alone" in said
    assert "channels_last 1.21x on the climb" not in said          # its ranges overlap
    # folded: the climb's gains along its chain, all six, against its rows end to end
    assert "The climb's 6 step gains, TF32 to Conv-BN folding, multiply to 8.66x" in composed
    assert "the rows give 8.66x end to end" in composed and "no base moved" in composed
    # the same gains on the climb as alone: the ranges overlap, the steps multiply
    run, gains = _h200_like(fp16_climb=1.34, fp16_iqr=(1.33, 1.35))
    run.rungs[-1].gain, run.rungs[-1].gain_spread = 1.03, (1.02, 1.04)
    assert "The ranges overlap: here the steps multiply" in tables.adds_up(run, gains)
    # a step flagged unstable on the climb: not decidable
    run, gains = _h200_like()
    run.rungs[3].unstable = "IQR 10% > 10%"
    assert "Not decidable: fp16 weights unstable on the climb" in tables.adds_up(run, gains)
    names = [s.name for s in ladder.REGIME_STEPS]
    assert tables.adds_up(run, {"eager": {n: gains["eager"][n] for n in names[:2]}}) == ""


def test_the_composed_fold_names_a_base_re_timed_off_its_own_step():
    run, _ = _h200_like()
    fold = run.rungs[-1]
    fold.here = {"torch.compile": {"images_per_s": 6636.0}}
    assert "bases moved (torch.compile 25,630 in its step, 6,636 in Conv-BN folding's)" in tables.composed(run)


def test_gpu_takeaways_name_the_course_form_device_time_keeps_and_unstable_steps():
    from labkit.chapters.ch08_inference_ladder import experiment

    start, fp16 = rung("eager strict float32", 64, 0.02), rung("fp16 weights", 64, 0.007, after="eager strict float32")
    fp16.gain, fp16.gain_spread, fp16.device_gain, fp16.device_spread = 1.15, (1.07, 1.6), 1.9, (1.8, 2.0)
    fp16.judged_by, fp16.unstable = "device time", "IQR 53% > 10%"
    run = SimpleNamespace(rungs=[start, fp16], strict=start, defaults=start, top=fp16,
                          top_at_baseline_batch=fp16, regimes={}, regime_bases={}, beyond=[],
                          regime_gains=lambda: {}, plan=experiment.plan(False))
    verdict = SimpleNamespace(form=experiment.COURSE_FORM, label="depends (on the baseline)")
    said = tables.takeaways(run, verdict)
    # the steps kept on device time: folded under the ladder since review 2026-12-05u item 5
    assert not any(line.startswith("Kept on device time") for line in said)
    from labkit.chapters.ch08_inference_ladder import report

    note = report.table(run.rungs, start, start, fresh=None).note
    assert "Kept on device time" in note and "fp16 weights 1.90x device time" in note
    # the form is the headline's ('C24's judged form'); a flagged step is the ladder's 'kept,
    # unstable' row, not a takeaway too (review 2026-12-04l item 2: each thing once); the
    # outcome is the verdict's row, not a takeaway repeating the headline (04m item 13c)
    assert not any(line.startswith("C24:") for line in said)
    assert not any(line.startswith("Flagged unstable") for line in said)


def test_the_profiled_idle_is_compared_with_the_unprofiled_from_the_numbers():
    """Review 2026-12-03d item 12: 'reads higher' was wrong for folding (7% against 21%)."""
    rows = []
    for name, prof, unprof in (("fp16 weights", 0.44, 0.17), ("Conv-BN folding", 0.07, 0.21),
                               ("TF32", 0.05, 0.045)):
        r = rung(name, 64, 0.01)
        r.profiled_idle, r.idle_share = prof, unprof
        rows.append(r)
    said = tables.profiled_against_unprofiled(rows)
    assert "higher on 1 of 3 rungs (most: fp16 weights, 44% profiled against 17%)" in said
    assert "lower on 1 (most: Conv-BN folding, 7% profiled against 21%)" in said
    assert tables.profiled_against_unprofiled([rung("cpu", 4, 0.1)]) == ""


def test_the_ceilings_are_one_line_not_the_records_repr():
    ceiling = SimpleNamespace(matmul_tflops={"float32": 51.39, "float16": 728.9}, copy_gbps=4243.9)
    assert tables.ceiling_line(ceiling) == (
        "measured ceilings: matmul float32 51.4, float16 729 TFLOP/s; copy 4,244 GB/s")


def test_a_claim_not_judged_here_says_so_in_its_folded_form():
    """Review 2026-12-03e item 8: the CPU's C24 fold read 'form judged: ' with nothing after it."""
    import labkit.claims  # noqa: F401  (registers the claims, C24 among them)
    from labkit.claims import tables as claim_tables

    shown = claim_tables.table([], pending=["C24"]).card()
    folded = "\n".join(text for _, text in shown.folded)
    assert "form judged: none on this machine (not judged here)" in folded
    assert "form judged: \n" not in folded


def test_where_the_time_goes_is_one_column_per_class_with_the_profiled_idle_folded():
    """Issue 37: a line per rung repeated the profiled-idle caveat on every rung (363 words on
    the H200 copy); the classes are columns, a class under MINOR everywhere and the idle the
    profile saw are folded, each number still there."""
    rows = []
    for name, kinds, idle in (("eager", {"GEMM/conv": 0.72, "elementwise": 0.25, "other": 0.03}, 0.02),
                              ("compiled", {"GEMM/conv": 0.61, "elementwise": 0.37, "other": 0.02}, 0.63)):
        r = rung(name, 64, 0.01)
        r.kinds, r.device_s, r.kernels_per_batch, r.profiled_idle, r.idle_share = kinds, 0.004, 106.0, idle, 0.2
        rows.append(r)
    shown = tables.attribution_table(rows)
    assert shown.columns == ["rung", "GEMM/conv", "elementwise", "device busy (ms/batch)", "kernels/batch"]
    assert shown.rows[1] == ["compiled", "61", "37", "4.00", "106"]
    folded = dict(shown.folded)
    assert folded["classes under 5%"] == "eager: other 3.0%\ncompiled: other 2.0%"
    idle = next(text for summary, text in shown.folded if summary.startswith("profiled idle"))
    assert idle.startswith("eager 2%; compiled 63%") and "higher on 1 of 2 rungs" in idle
    # a CPU (no device clock): the shares alone, of the CPU ops' self time, nothing folded
    cpu = rung("cpu", 4, 0.1)
    cpu.kinds = {"GEMM/conv": 0.9, "elementwise": 0.1}
    shown = tables.attribution_table([cpu])
    assert "CPU op self time" in shown.title and shown.rows == [["cpu", "90", "10"]] and not shown.folded


def test_each_steps_reading_is_shown_and_its_figures_folded():
    before, after = rung("fp32", 64, 0.02), rung("fp16", 64, 0.01, after="fp32")
    after.gain, after.gain_spread, after.device_gain, after.device_spread = 2.0, (1.9, 2.1), 2.0, (1.95, 2.05)
    before.device_s, after.device_s, before.idle_share, after.idle_share = 0.019, 0.0095, 0.05, 0.05
    shown = tables.explanations([before, after])
    assert shown.columns == ["step", "reading"]
    assert shown.rows == [["fp16", "Both clocks gained."]]
    (summary, figures), = shown.folded
    assert figures.startswith("fp16: 2.00x wall (1.90 to 2.10); 2.00x device time per image")


def test_the_interaction_takeaway_names_the_step_whose_gain_differs_most():
    said = tables.regimes_said({"eager": {"channels_last": 1.21, "fp16 weights": 1.29, "folding": 1.03},
                                "compiled": {"channels_last": 1.03, "fp16 weights": 1.80}})
    assert said == ("A step's gain depends on what came before it: fp16 weights 1.29x eager, "
                    "1.80x compiled.")
    assert tables.regimes_said({"eager": {"folding": 1.03}}) is None  # one regime: no lesson said


def test_progress_outside_a_notebook_is_a_printed_line_per_rung(capsys):
    tables.say("TF32")
    tables.say("fp16 weights")
    assert capsys.readouterr().out == "  measuring: TF32\n  measuring: fp16 weights\n"


def test_the_takeaways_give_the_graphs_rule_not_the_gate_line():
    """Review 2026-12-04j item 9: CUDA Graphs' wall gain follows 1/(1 - its base's idle), the
    rule the page shows best, replaces 'Every rung stayed inside the numerics gate'."""
    from labkit.chapters.ch08_inference_ladder import experiment

    start = rung("fp16 weights", 64, 0.005)
    graphs = rung("CUDA Graphs", 64, 0.0042, after="fp16 weights")
    graphs.device_gain, graphs.gain, graphs.gain_spread = 1.0, 1.19, (1.18, 1.24)
    graphs.here = {"fp16 weights": {"images_per_s": 12868.0, "idle_share": 0.18}}
    run = SimpleNamespace(rungs=[start, graphs], strict=start, defaults=start, top=graphs,
                          top_at_baseline_batch=graphs, regimes={}, regime_bases={}, beyond=[],
                          regime_gains=lambda: {}, plan=experiment.plan(False))
    said = tables.takeaways(run, SimpleNamespace(form=experiment.COURSE_FORM, label="depends"))
    rule = next(line for line in said if line.startswith("CUDA Graphs removes host work only"))
    assert "18% idle, 1.22x predicted, 1.19x measured" in rule
    assert not any("stayed inside the numerics gate" in line for line in said)


def _retimed_cpu_run():
    """The CPU page of 2026-12-04 14:10: batch 16 built on the start, first timed 160 images/s,
    decided on a re-time at 184 (2.00x over the start's run median of 90, its first timing 98)."""
    start = rung("PyTorch defaults", 4, 4 / 98)
    top = rung("batch 16", 16, 16 / 160, after="PyTorch defaults")
    top.here = {"PyTorch defaults": {"images_per_s": 83.0, "step_images_per_s": 184.0}}
    top.timings = [{"gain": (2.1, 2.0, 2.2), "base_images_per_s": 75.0}, {"gain": (2.19, 2.1, 2.3),
                                                                            "base_images_per_s": 83.0}]
    top.over = {"PyTorch defaults": (2.00, 1.92, 2.11)}
    top.baseline_scale = {"PyTorch defaults": 83.0 / 90.0}   # its median over the run: 90
    return SimpleNamespace(rungs=[start, top], strict=start, defaults=start, top=top,
                           top_at_baseline_batch=start, regimes={}, regime_bases={}, beyond=[],
                           regime_gains=lambda: {}, plan=__import__(
                               "labkit.chapters.ch08_inference_ladder.experiment",
                               fromlist=["plan"]).plan(False))


def test_the_takeaway_and_standing_quote_the_images_per_s_the_tables_ratio_divides():
    """Review 2026-12-04k item 5: the table read 'batch 16 | 184 (first timed: 160) | 2.00x', the
    takeaway and the standing '160 images/s, 2.0x' (160/98 is 1.63x), and the start row 98 at
    1.00x while every ratio divided by 90."""
    from labkit.chapters.ch08_inference_ladder import report

    run = _retimed_cpu_run()
    shown = report.table(run.rungs, run.strict, run.defaults, fresh=None)
    cells = [cells for _, cells in shown.rows]
    assert cells[0][2] == "90 (first timed: 98)" and cells[1][2] == "184 (first timed: 160)"
    first = tables.takeaways(run, None)[0]
    assert first.startswith("The kept top rung (batch 16): 184 images/s, 2.00x eager float32")
    best = dataclasses.replace(run.top, kinds={})
    standing = tables.standing_table(best, 32, {"float32": 0.16}, "", start=run.strict)
    assert standing.rows[0][1].startswith("184 images/s")
    assert tables.standing_table(best, 32, {"float32": 0.16}, "").rows[0][1].startswith("160 images/s")


def test_the_gpu_headline_and_quiz_lead_with_the_judged_form():
    """Review 2026-12-04k item 4: the H200's first takeaway and opening quiz were the top rung at
    batch 256 over strict float32 (9.8x, 'over 7x'); C24 judges the best rung at batch 64 over
    both baselines (8.7x strict, 4.1x defaults), which no takeaway said."""
    strict, defaults = rung("eager strict float32", 64, 64 / 3180), rung("PyTorch defaults", 64, 64 / 6700)
    judged = rung("Conv-BN folding", 64, 64 / 27_600, after="torch.compile")
    top = rung("batch 256", 256, 256 / 31_000, after="Conv-BN folding")
    judged.over = {strict.name: (8.70, 8.6, 8.8), defaults.name: (4.12, 4.1, 4.2)}
    top.over = {strict.name: (9.80, 9.7, 9.9), defaults.name: (4.63, 4.6, 4.7)}
    run = SimpleNamespace(rungs=[strict, defaults, judged, top], strict=strict, defaults=defaults,
                          top=top, top_at_baseline_batch=judged, regimes={}, regime_bases={},
                          beyond=[], regime_gains=lambda: {})
    assert tables.headline(top, judged, strict, defaults, 31_000, "batch 256", 9.80) == (
        "C24's judged form, batch 64 (Conv-BN folding): 8.7x strict float32 eager, 4.1x PyTorch's "
        "default float32; the top rung (batch 256, not a seed step): 31,000 images/s, 9.8x and 4.6x.")
    said = tables.takeaways(run, SimpleNamespace(form="f", label="depends (on the baseline: past 4.8x)"))
    assert said[0].startswith("C24's judged form") and not any(line.startswith("C24:") for line in said)
    assert tables.total_key(run, True) == "2x to 4.8x"      # 4.12x: the judged form's band
    assert tables.total_key(run, False) == "over 7x"        # (the top rung over the start)
    plan = SimpleNamespace(batch=64)
    assert "C24's judged form" in tables.total_question(plan, True) and "batch 64" in tables.total_question(plan, True)
    assert "default float32" in tables.total_question(plan, True)


def test_the_climbs_last_progress_line_says_it_is_done(capsys):
    """Review 2026-12-04k item 10b: the H200 cell's only output was 'rung 14 started: ...'."""
    run = cpu_run()
    run.seconds = 12.4
    tables.say_done(run)
    assert capsys.readouterr().out == "done: 2 rungs in 12 s\n"
