"""Chapter 05's entry point for the reproduce check (benchmarks/reproduce.py 05 --runs 3).

measure_verdicts() judges every claim this machine can judge, in a fresh measurement each
call: C26 everywhere (deterministic), C25 (behind a queued kernel), C13 and C23 only with a
CUDA GPU. measure_knee() is the chapter's central number, the knee of the worker sweep
(throughput from total time), with its arithmetic and the plateau's; the checks are the same
knee within one step of the sweep in every run, the plateau's arithmetic held in every run,
and each knob's gain / no gain the same in every run (REPRODUCED_RULE, printed).
benchmarks/reproduce.py calls it through measure_numbers() and summarise_numbers().

Sized to fit a batch job: on a 16-core H200 host cost_model prices the worker sweep at about
15 s (two rounds) and the knob sweep at about 63 s (ten rounds of the four-row ladder, one-queue
windows; hard budgets knee_experiment.WORKER_SWEEP_BUDGET_S and KNOB_SWEEP_BUDGET_S, 45 s and
90 s); with the start-up and the verdicts (~18 s in the record) and the preparation (~10 s)
one full run is about 105 s (74 s at six rounds, 07:13 UTC) and three about 5.5 minutes; --quick leaves the knob sweep out. Each run's knob calls follow one
printed rule (knee_experiment.knob_rule: the geometric mean of the per-round ratios and its
95% interval), so the runs compare call by call. last_phases() and
measure_numbers()['phases'] say where each run's seconds went.
"""

from __future__ import annotations

import hashlib
import logging
import re
import warnings
from collections.abc import Mapping, Sequence
from datetime import datetime

import torch

from labkit import claims
from labkit.chapters.ch05_dataloader import (
    channels_last_probe,
    fresh_step,
    h2d_copies,
    knee_experiment,
    loader_data,
    loader_sweep,
    shm,
    train_step,
)
from labkit.claims.core import Verdict
from labkit.core import results
from labkit.measure import intervals, progress

CHAPTER = "05_dataloader"
C25_BYTES = 256 * 2**20
# 3 sources x 5 rounds x 0.3 s: 154 MB copies, 10+ per round (the chapter's own, since 2026-12-03)
C23_ROUNDS, C23_REP_MS = h2d_copies.SEED_SIZE_ROUNDS, h2d_copies.SEED_SIZE_REP_MS
_log = logging.getLogger(__name__)
_PHASES = progress.Phases(_log)  # the parts of the last measure_verdicts() call
_timed = _PHASES.timed


def last_phases() -> dict[str, float]:
    """Seconds of each part of the last measure_verdicts() call in this process."""
    return dict(_PHASES.seconds)


def _gpu_verdicts(quick: bool) -> list[Verdict]:
    rows, said = _timed("C25: non_blocking calls behind a queued kernel",
                        lambda: h2d_copies.busy_stream_returns(repeats=3 if quick else 5))
    out = [claims.get("C25").judge(h2d_copies.c25_busy_evidence([r.as_dict() for r in rows], said),
                                   form=claims.SEED_FORM)]
    probe = _timed("C13: pin_memory_device probe", h2d_copies.pin_memory_device_probe)
    out.append(claims.get("C13").judge(probe["pin_memory_device"], form=claims.SEED_FORM))
    out.append(_timed("C23: pageable, pinned, pin_memory_device copies", _c23))
    return out


def _c23() -> Verdict:
    shape = h2d_copies.SEED_BATCH_SHAPE
    pageable = torch.randn(shape)
    source = torch.utils.data.TensorDataset(pageable)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (pinned,) = next(iter(torch.utils.data.DataLoader(source, batch_size=shape[0], pin_memory=True)))
        (with_device,) = next(iter(torch.utils.data.DataLoader(
            source, batch_size=shape[0], pin_memory=True, pin_memory_device="cuda:0")))
    comparison = h2d_copies.compare_sources({"pageable": pageable, "pinned": pinned,
                                             "pin_memory_device": with_device},
                                            rounds=C23_ROUNDS, rep_ms=C23_REP_MS)
    return claims.get("C23").judge({
        "pageable_gbps": comparison["pageable"].timing.gbps,
        "pinned_gbps": comparison["pinned"].timing.gbps,
        "pin_memory_device_gbps": comparison["pin_memory_device"].timing.gbps,
        "pinned_speedup_iqr": h2d_copies.speedup_between(comparison, "pageable", "pinned"),
        "pin_memory_device_speedup_iqr": h2d_copies.speedup_between(comparison, "pinned",
                                                                    "pin_memory_device"),
        "transfer_bytes": torch.Size(shape).numel() * 4,
        "flags": comparison.flags()},  # each flagged copy with its size, for the trust rule
        form=claims.SEED_FORM)


def measure_verdicts(quick: bool = False) -> list[Verdict]:
    """Fresh verdicts for chapter 05's claims that this machine can judge."""
    _PHASES.seconds.clear()
    verdicts = [_timed("C26: channels_last in __getitem__",
                       lambda: claims.get("C26").judge(channels_last_probe.probe(),
                                                       form=claims.SEED_FORM))]
    if torch.cuda.is_available():
        verdicts += _gpu_verdicts(quick)
    return verdicts


def measure_knee(quick: bool = False, budget_s: float | None = knee_experiment.WORKER_SWEEP_BUDGET_S,
                 knobs: bool = False) -> dict:
    """A fresh knee: {'knee_workers', 'worker_counts', 'knee', 'rows', arithmetic, 'noise',
    'phases', 'budget_note', 'plateau'}; with knobs=True the knob table at it too."""
    return knee_experiment.measure_knee(quick, knobs=knobs, budget_s=budget_s)


def measure_numbers(quick: bool = False, knobs: bool | None = None) -> dict:
    """What benchmarks/reproduce.py records per run beside the verdicts: the knee, its
    arithmetic, the plateau against its prediction, each knob's call (knobs; by default on a
    full run, and on a quick run without a GPU, where the knob sweep takes seconds; off on a
    quick GPU run: there it costs up to its 100 s budget), and the seconds of each phase (the
    sweep's rows left out: they are large)."""
    knobs = (not quick or not torch.cuda.is_available()) if knobs is None else knobs
    knee = measure_knee(quick, knobs=knobs)
    keep = ("worker_counts", "measured_counts", "knee_workers", "arithmetic_workers", "agrees",
            "workers_needed", "sample_cost_s", "compute_s", "batch_load_s", "noise", "rounds",
            "budget_s", "budget_note", "phases", "plan")
    out = {k: knee[k] for k in keep}
    out["knee_testable"] = knee.get("knee_testable")
    out["step_as_swept_s"] = knee.get("step_as_swept_s")
    out["sample_cost_iqr_s"] = knee.get("sample_cost_iqr_s")
    plateau = knee.get("plateau") or {}
    out["plateau"] = {k: plateau.get(k) for k in ("measured", "predicted", "ceiling", "agrees",
                                                  "bound", "wait_s", "step_s", "tolerance",
                                                  "parts_s", "step_faults", "private_faults",
                                                  "swept_step_s", "swept_faults", "wait_share",
                                                  "batch_size", "step_used", "predicted_apart",
                                                  "refused_s", "loaded_workers", "loaded_step_s",
                                                  "loaded_cpu_s", "loaded_alone_s",
                                                  "loaded_alone_cpu_s", "cores_ceiling",
                                                  "pin_gain_predicted", "drift", "idle_share",
                                                  "private_again_s", "private_after_s", "private_gap",
                                                  "handover_s", "predicted_handover",
                                                  # review 2026-12-05o 05-07 item 6: the restart's
                                                  # median and the dropped count reach the record
                                                  "handover_restart_s", "handover_dropped",
                                                  "handover_workers",
                                                  # session z: the step's rounds, so a drift is
                                                  # re-judged by arm (which drifted, re-timed or not)
                                                  "loaded_times_s", "loaded_alone_times_s",
                                                  "loaded_rounds", "loaded_first_drift",
                                                  # review 2026-12-06z 05-07 item 2: each round's
                                                  # window and step, so plateau_now re-judges it
                                                  "round_rates", "round_waits_s", "round_steps_s",
                                                  "round_check", "round_decision", "paired")}
    for key in ("step_as_swept_faults", "private_step_s", "private_step_faults"):
        out[key] = knee.get(key)  # the fresh batch's step against a private one (item 1)
    out["warmup_rule"] = knee.get("warmup_rule")  # cost_model reads the warm-ups' rule
    if knobs:
        out["knob_decisions"] = knee["knob_decisions"]
        out["knob_against"] = {r["label"]: r.get("against") for r in knee["knob_table"][1:]}
        out["knob_ratios"] = {r["label"]: [r.get("ratio"), r.get("ratio_low"), r.get("ratio_high")]
                              for r in knee["knob_table"][1:]}
        out["knob_ratios_are"] = INTERVAL  # [geometric mean, its 95% interval's low and high end]
        out["knob_round_ratios"] = {r["label"]: r.get("round_ratios") for r in knee["knob_table"][1:]}
        # a ladder step's increment over the step before: shown, never called (issue 39)
        out["knob_increments"] = {r["label"]: _increment(r["increment"]) for r in knee["knob_table"][1:]
                                  if r.get("increment")}
        out["knob_budget_note"] = knee["knob_budget_note"]
        # review 2026-12-04l items 2 and 5: what the budget cut, and the count fixed beforehand
        out["knob_left_out"] = knee.get("knob_left_out")
        out["knob_rounds_asked"] = knee.get("knob_rounds_asked")
        out["knob_workers"] = knee.get("knob_workers")
        out["knob_rounds"] = knee.get("knob_rounds")  # the A/A row's label ends '(A/A)'
        out["knob_window_steps"] = knee.get("knob_window_steps")  # cost_model reads it
        out["knob_rule"] = knee.get("knob_rule")
        out["knob_orders"] = knee.get("knob_orders")
        out["aa_by_order"] = knee.get("aa_by_order")
        out["knob_round_rates"] = knee.get("knob_round_rates")  # every row, round by round
    out["samples_per_s"] = {str(r["num_workers"]): r["samples_per_s"] for r in knee["rows"]}
    out["wait_share"] = {str(r["num_workers"]): r["wait_share"] for r in knee["rows"]}
    out["explanation"] = knee["knee"]["explanation"]
    out["sources"] = sources_fingerprint()  # which sources measured and judged this run (item 5)
    return out


# The modules a run's numbers come from and are judged by: a record whose runs carry another
# fingerprint (or none: records from before 2026-12-05) ran other sources (review 2026-12-05o
# 05-07 item 5: the page said the 19:13 runs 'ran these sources', run on bc15233 before the
# hand-over and control-rule changes).
MEASURING_MODULES = (fresh_step, knee_experiment, loader_data, loader_sweep, shm, train_step)


def sources_fingerprint() -> str:
    """The first 12 hex digits of a SHA-256 over the measuring modules' source files, the
    interval's and this one (MEASURING_MODULES): what a reproduce record's runs store as
    'sources'."""
    digest = hashlib.sha256()
    for path in (*(m.__file__ for m in MEASURING_MODULES), intervals.__file__, __file__):
        with open(path, "rb") as handle:  # type: ignore[arg-type]
            digest.update(handle.read())
    return digest.hexdigest()[:12]


# What 'reproduced' means for chapter 05 (review 2026-12-03g item 4: it passed a knob called
# "gain, not resolved, not resolved" and a plateau that missed in 3 of 3). Issue 39 asks for
# 3 of 3: every statement the chapter makes from a run must come out the same in every run.
REPRODUCED_RULE = ("the rule for 'reproduced': every run's knee within one step of the sweep of "
                   "every other's; the plateau's round-by-round call holds in every run (the 95% "
                   "interval of its rounds' measured / predicted inside the "
                   f"{loader_sweep.PLATEAU_TOLERANCE:.0%} band, loader_sweep.round_call; a run "
                   "recorded without rounds: its arithmetic within its band, as before); each "
                   "knob's gain / no gain the same in every run (a loss counts apart from no gain; "
                   "a run that did not measure a knob fails it; the A/A by the control's own "
                   f"{100 * knee_experiment.CONTROL_LEVEL:.2f}% interval, knee_experiment.control_rule); "
                   "and each of those calls the recorded reference page's own in every run")


def round_figures(plateau: Mapping, batch: object) -> tuple[list, list, list] | None:
    """A plateau record's per-round (window rates, waits, steps beside), or None where it has
    none (a record from before review 2026-12-06z 05-07 item 2) or they do not pair."""
    figures = [list(plateau.get(k) or []) for k in ("round_rates", "round_waits_s", "round_steps_s")]
    if not batch or not figures[0] or len({len(f) for f in figures}) != 1:
        return None
    return figures[0], figures[1], figures[2]


def plateau_now(run: dict) -> dict | None:
    """One run's plateau check by today's rule: {'measured', 'predicted', 'agrees', 'step_used',
    'tolerance', 'drift', 'round'}; None when the run recorded no plateau.
    Timed round by round (review 2026-12-06z 05-07 item 2): the call from its per-round figures
    (loader_sweep.round_ratios, round_call; 'round' holds the call's dict): agrees True where it
    holds, False where it misses, None where not resolved. A record without them is judged as
    before (loader_sweep.Plateau: batch / (the step beside the decoders, or inside the sweep, +
    wait), vetoed by drift): records made before review 2026-12-03g item 2 predicted from the
    step timed apart."""
    plateau = run.get("plateau") or {}
    if not plateau.get("predicted") or not plateau.get("measured"):
        return None
    tolerance = _tolerance(plateau)
    batch = plateau.get("batch_size") or (run.get("plan") or {}).get("batch_size")
    figures = round_figures(plateau, batch)
    if figures is not None:
        try:
            check = loader_sweep.windows_call(
                loader_sweep.round_call(loader_sweep.round_ratios(int(batch), *figures), tolerance),  # type: ignore[call-overload]
                loader_sweep.windows_rate(figures[0]), plateau.get("measured"), tolerance)
        except (TypeError, ValueError):  # figures a round-by-round call cannot read: as before
            check = None
        if check is not None:
            agrees = {loader_sweep.HOLDS: True, loader_sweep.MISSES: False}.get(check["call"])
            return {"measured": float(plateau["measured"]), "predicted": float(plateau["predicted"]),
                    "step_used": f"beside {plateau.get('loaded_workers')} decoding worker(s), round by round",
                    "agrees": agrees, "tolerance": tolerance, "drift": None, "round": check}
    swept, wait = plateau.get("swept_step_s"), plateau.get("wait_s")
    loaded = plateau.get("loaded_step_s")  # the step beside decoding workers (review 2026-12-03h item 1)
    if batch and loaded and wait is not None:
        predicted = float(batch) / (float(loaded) + float(wait))
        step_used = f"beside {plateau.get('loaded_workers')} decoding worker(s)"
    elif batch and swept and wait is not None:
        predicted = float(batch) / (float(swept) + float(wait))
        step_used = "inside the sweep"
    else:
        predicted, step_used = float(plateau["predicted"]), plateau.get("step_used") or "timed apart"
    measured = float(plateau["measured"])
    # review 2026-12-04k item 1: a step whose timing drifted predicts nothing (agrees None): by
    # today's rule where the record holds the step's rounds, else as recorded ('drift'), less
    # the old veto of the step alone against the private step of prepare() (review 2026-12-04l
    # item 1: two conditions, not drift; the 16:07 H200 reproduce vetoed two runs with it)
    drift = old_veto(plateau, run.get("private_step_s"))
    if plateau.get("loaded_times_s"):
        try:
            drift = loader_sweep.Plateau.from_record(plateau).drift
        except (TypeError, ValueError):  # a record's keys not enough to judge: as recorded
            pass
    return {"measured": measured, "predicted": predicted, "step_used": step_used,
            "agrees": None if drift else abs(measured / predicted - 1) <= tolerance,
            "tolerance": tolerance, "drift": drift}


def old_veto(plateau: Mapping, private_step_s: float | None = None) -> list | None:
    """A plateau record's 'drift', or None where it is the veto that today's rule dropped:
    (private step of prepare(), the step alone here), the two conditions review 2026-12-04l
    item 1 showed to differ steadily (1.25-1.39x) while the prediction held."""
    drift = plateau.get("drift")
    private = plateau.get("private_step_s") or private_step_s
    alone = plateau.get("loaded_alone_s")
    if drift and private and alone and [round(float(v), 9) for v in drift] == [
            round(float(private), 9), round(float(alone), 9)]:
        return None
    # review 2026-12-04m item 3: the private step before and after the rounds, where the direct
    # check (the step beside the decoders against the step inside the sweep) held: a note
    again, after = plateau.get("private_again_s"), plateau.get("private_after_s")
    loaded, swept = plateau.get("loaded_step_s"), plateau.get("swept_step_s")
    if drift and again and after and loaded and swept and [round(float(v), 9) for v in drift] == [
            round(float(again), 9), round(float(after), 9)] \
            and abs(float(loaded) / float(swept) - 1) <= _tolerance(dict(plateau)):
        return None
    return drift


RECORDED = "recorded"  # summarise_numbers' default: read the reference's calls from results/
# The sources whose plateau is predicted from the step timed beside decoding workers, with the
# check against the reference page's calls (9579bb8, 2026-12-03 23:01 UTC). A reproduce record
# from before ran older sources: their plateau was read inside the sweep (a consistency check),
# and no reference check ran (review 2026-12-04i item 1).
PLATEAU_PREDICTION_SINCE = "2026-12-03T23:01:18+00:00"


def record_scope(record: Mapping | None, since: str = PLATEAU_PREDICTION_SINCE) -> str:
    """What the reference's reproduce record of chapter 05 reproduced, and on which sources, in
    one line (review 2026-12-04i item 1: the 2026-12-03 22:17 record predates the plateau's
    prediction, so it must not read as reproducing it). `record`: the JSON that
    benchmarks/reproduce.py 05 writes (results/reproduce/), or None."""
    if not isinstance(record, Mapping) or not record.get("recorded_at"):
        return "Reproduce: no dated reproduce record of this chapter on the reference."
    at, since_at = datetime.fromisoformat(str(record["recorded_at"])), datetime.fromisoformat(since)
    summary = record.get("numbers_summary") or {}
    same, differ = [], []
    # review 2026-12-04j item 2: a record whose knob sweep ran another number of rounds is no
    # check of this source's knob calls, whichever way it went
    runs = [r for r in record.get("numbers") or [] if isinstance(r, Mapping)]
    rounds = {r.get("knob_rounds") for r in runs} - {None}
    on_gpu = any((r.get("plan") or {}).get("device") == "cuda" for r in runs)
    today = knee_experiment.knob_rounds(on_gpu)  # review 2026-12-04l item 2: six on a GPU
    # ... and a record whose knob rows are not today's (the 16:07 H200 record's '+ pin' row)
    rows = {_change(label) for r in runs for label in (r.get("knob_decisions") or {})}
    other_design = bool(rounds) and (rounds != {today} or (on_gpu and rows != set(GPU_KNOB_CHANGES)))
    knobs = "knob calls" + (f" (at {'/'.join(str(r) for r in sorted(rounds))} rounds)" if other_design else "")
    for name, key in (("knee", "knee_agree"), (knobs, "knobs_agree")):
        if key in summary:
            (same if summary[key] else differ).append(name)
    claims_seen = record.get("claims") or {}
    if claims_seen:
        agreed = sum(1 for v in claims_seen.values() if isinstance(v, Mapping) and v.get("agree"))
        (same if agreed == len(claims_seen) else differ).append(f"verdicts ({agreed} of {len(claims_seen)})")
    said = (f"{', '.join(same)} the same" if same else "") + (
        f"{'; ' if same else ''}{', '.join(differ)} NOT the same" if differ else "")
    head = f"Reproduce: the reference's {record.get('runs', '?')} runs of {at:%Y-%m-%d %H:%M} UTC"
    if at < since_at:
        return (f"{head} ran sources older than this prediction ({since_at:%Y-%m-%d %H:%M}): {said}; "
                "this prediction not yet reproduced.")
    held, total = summary.get("plateau_held"), summary.get("plateau_runs")
    checked = [p for p in (plateau_now(dict(r)) for r in runs) if p]
    if checked:  # by today's drift rule (review 2026-12-04l item 1), not the record's
        held, total = sum(1 for p in checked if p["agrees"]), len(checked)
    # review 2026-12-04m item 3: batch / (step + its runs' own wait) is a consistency check
    plateau = (f"; the plateau's check held in {held} of {total}" if held is not None else "")
    design = (f"; today's knob design ({today} rounds) not yet reproduced" if other_design else "")
    # review 2026-12-05o 05-07 item 5: 'these sources' only where every run stored this
    # chapter's fingerprint; else the stored calls as recorded, a call that today's rule reads
    # otherwise said as re-read by a rule set after the runs (never as their reproduce)
    if runs and all(r.get("sources") == sources_fingerprint() for r in runs):
        return f"{head} ran these sources: {said}{plateau}{design}."
    return (f"{head} ran older sources: {said}{_rejudged(runs, summary)}{plateau}{design}; "
            "these sources not yet reproduced.")


def _rejudged(runs: Sequence[Mapping], summary: Mapping) -> str:
    """' (re-read by a rule set after these runs: knob calls the same)': the stored knee and knob
    calls that summarise_numbers reads otherwise today ('' where none, or the runs' numbers
    cannot be read again)."""
    try:
        again = summarise_numbers([dict(r) for r in runs])
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return ""
    moved = [f"{name} {'the same' if again[key] else 'NOT the same'}"
             for name, key in (("knee", "knee_agree"), ("knob calls", "knobs_agree"))
             if key in summary and key in again and bool(summary[key]) != bool(again[key])]
    return f" (re-read by a rule set after these runs: {', '.join(moved)})" if moved else ""


# The GPU knob rows' changes from the baseline (knee_experiment.knob_settings on a GPU): a
# record with others ran another design
GPU_KNOB_CHANGES = ("(A/A)", "pin devprefetch uint8")


def _change(label: str) -> str:
    """A knob label's change from its baseline ('w8 b64 pin devprefetch uint8': 'pin
    devprefetch uint8'), whatever its worker count."""
    return re.sub(r"^w\d+ b\d+ ?", "", label)


def reference_scope(machine: str = results.DEFAULT_REFERENCE) -> str:
    """record_scope of the reference's record (results/reproduce/<machine>-05_dataloader.json),
    or why there is none to read."""
    from labkit.claims import reproduced

    try:
        record = reproduced.load_record(reproduced.record_path(machine, CHAPTER))
    except reproduced.ReproduceRecordError as exc:
        return f"Reproduce: the reference's record is unreadable ({exc})."
    return record_scope(record)


def reference_calls(machine: str = results.DEFAULT_REFERENCE) -> dict | None:
    """The recorded reference page's own calls (review 2026-12-03h item 2: the page called
    '+ devprefetch uint8' not resolved while 3 of 3 reproduce runs called it a gain, and the
    check compared the runs only with each other): {'plan', 'knee', 'knobs': {label: gain
    kind}, 'plateau': agrees}; None where nothing is recorded. The knobs by the runs' own rule
    (run_decisions): the A/A by the control's interval, the knobs beyond the A/A's reach."""
    knee = results.recorded(CHAPTER, "knee", machine)
    if not isinstance(knee, dict):
        return None
    workers = results.recorded(CHAPTER, "sweep_workers", machine)
    out: dict = {"plan": (workers or {}).get("plan") if isinstance(workers, dict) else None,
                 "knee": knee.get("workers"), "knobs": {}, "plateau": None}
    knobs = results.recorded(CHAPTER, "sweep_knobs", machine)
    # every call against the baseline (issue 39): a row recorded against the step before is
    # re-judged from its rounds; one that cannot be is no call of today's table, so left out
    table = knee_experiment.rebased((knobs or {}).get("table", []) if isinstance(knobs, dict) else [])
    # review 2026-12-05o 05-07 item 1: the page's calls read by the rule the runs are read by
    # (run_decisions): each interval re-judged, then the control (controlled: the A/A by its own
    # 98.75% interval, a knob's gain or loss only beyond the A/A's reach), not at 95% alone
    for row in table[1:]:
        ratios = [row.get("ratio"), row.get("ratio_low"), row.get("ratio_high")]
        if "level" in row and None not in ratios:
            row["decision"] = knee_experiment.judge_interval(*ratios)
    for row in knee_experiment.controlled(table)[1:]:
        if not row.get("read_against"):
            out["knobs"][row["label"]] = gain_kind(row.get("decision"))
    plateau = results.recorded(CHAPTER, "plateau", machine)
    checked = plateau_now({"plateau": plateau}) if isinstance(plateau, dict) else None
    out["plateau"] = None if checked is None else checked["agrees"]
    return out


def _same_set_up(runs: Sequence[dict], reference: dict) -> bool:
    """Whether the runs ran the reference's set-up (model, batch, device): only then is the
    reference's call theirs to reproduce (a CPU run is not compared with the H200 page)."""
    plan = reference.get("plan") or {}
    keys = ("model", "batch_size", "device")
    return bool(plan) and all(all((r.get("plan") or {}).get(k) == plan.get(k) for k in keys) for r in runs)


def reference_agreement(runs: Sequence[dict], reference: dict) -> dict:
    """Each call the page makes (the knee, the plateau's band, every knob's gain / no gain)
    against the reference's own: in how many runs it was the reference's call ('the
    reference's call in N of 3'); 'differ' names every call that not all runs share with the
    reference: then the reference is not reproduced (it is the outlier where the runs agree
    among themselves)."""
    counts = sorted(set().union(*(r["worker_counts"] for r in runs)))
    found: dict[str, tuple[str, int]] = {}
    if reference.get("knee") is not None and reference["knee"] in counts:
        # review 2026-12-04l item 5: 'knee 8 workers in 3 of 3' read as three knees of 8 where
        # they were 8, 8 and 4; the call is 'within one step', and the knees are named
        knees = ", ".join(str(r["knee_workers"]) for r in runs)
        found["knee"] = (f"within one step of {reference['knee']} workers; knees {knees}", sum(
            1 for r in runs if int(r["knee_workers"]) in counts
            and loader_sweep.steps_apart(counts, int(r["knee_workers"]), reference["knee"]) <= 1))
    if reference.get("plateau") is not None:
        checked = [plateau_now(r) for r in runs]
        found["plateau"] = ("within its band" if reference["plateau"] else "outside its band", sum(
            1 for p in checked if p and p["agrees"] == reference["plateau"]))
    measured = [{at_knee(label): call for label, call in run_decisions(r).items()} for r in runs]
    for label, kind in (reference.get("knobs") or {}).items():
        found[f"knob {label}"] = (kind, sum(1 for d in measured
                                            if gain_kind(d.get(at_knee(label), NOT_MEASURED)) == kind))
    differ = [name for name, (_, n) in found.items() if n < len(runs)]
    return {"calls": found, "differ": differ, "outliers": [k for k, (_, n) in found.items() if n == 0],
            "runs": len(runs)}


def summarise_numbers(runs: Sequence[dict], reference: dict | str | None = RECORDED) -> dict:
    """Across runs: each run's knee and arithmetic, whether the knees agree within one step of
    the sweep ('the same knee within one step of the sweep in N of N runs': N of N when every
    pair of runs is within one step; else the largest group around one run: 'knee_agree'),
    how many runs' plateau check held (plateau_now; 'plateau_agree' only when it held in
    every run: a plateau that misses in 3 of 3 does not reproduce the chapter's arithmetic),
    and each knob's gain / no gain in every run ('knobs_agree' only when each is the same in
    every run, knob_agreement). 'agree', which benchmarks/reproduce.py's all_agree includes,
    is all three (REPRODUCED_RULE, printed): the last line says 'reproduced' or 'NOT
    reproduced' with the counts behind it."""
    if not runs:
        raise ValueError("summarise_numbers needs the numbers of at least one run")
    counts = sorted(set().union(*(r["worker_counts"] for r in runs)))
    knees = [int(r["knee_workers"]) for r in runs]
    within = max(sum(1 for b in knees if loader_sweep.steps_apart(counts, a, b) <= 1) for a in knees)
    agree = knee_experiment.knees_reproduce(knees, counts)
    lines = [f"  knee of the worker sweep {counts} (throughput = samples / wall time over "
             "steady-state windows):"]
    for i, r in enumerate(runs, start=1):
        rates = ", ".join(f"w{w}: {float(t):.0f}" for w, t in r["samples_per_s"].items())
        lines.append(f"    run {i}: knee {r['knee_workers']} workers; the arithmetic "
                     f"({r['batch_load_s'] * 1e3:.0f} ms of decode per batch / "
                     f"{(r.get('step_as_swept_s') or r['compute_s']) * 1e3:.1f} ms per step as "
                     f"swept = {r['workers_needed']:.1f} "
                     f"workers) points at {r['arithmetic_workers']} "
                     f"({_agreement(r)}); samples/s {rates}")
        plateau = plateau_now(r)
        if plateau:
            lines.append(f"      plateau {plateau['measured']:.0f} samples/s against "
                         f"{plateau['predicted']:.0f} from the step {plateau['step_used']} "
                         # the record's rounds beside today's reading, so a drift names its arm
                         # (the session-z code review: plateau_now's dict alone has no rounds)
                         f"({_plateau_band({**r['plateau'], **plateau})}); bound: {r['plateau']['bound']}")
            handed = r["plateau"].get("predicted_handover")
            if handed:  # review 2026-12-04m item 3: the step beside + the hand-over, both timed apart
                restart = r["plateau"].get("handover_restart_s")
                dropped = r["plateau"].get("handover_dropped")
                notes = ([f"{restart * 1e3:.1f} as they restart"] if restart is not None else []) + (
                    [f"{dropped} dropped as a decode"] if dropped else [])
                beside = loader_sweep.handover_beside(r["plateau"].get("handover_workers"),
                                                      r["plateau"].get("loaded_workers"))
                ratio = plateau["measured"] / handed
                lines.append(f"      the hand-over of a queued batch beside {beside} "
                             f"{r['plateau']['handover_s'] * 1e3:.1f} ms"
                             + (f" ({'; '.join(notes)})" if notes else "")
                             + ": "
                             f"step beside + hand-over predicts {handed:.0f} "
                             f"({ratio:.2f}x of the measured: "
                             f"{'within' if abs(ratio - 1) <= plateau['tolerance'] else 'outside'} "
                             f"the {plateau['tolerance']:.0%} band)")
        if r.get("budget_note"):
            lines.append(f"      {r['budget_note']}")
    if len(runs) > 1 and all(r.get("sample_cost_s") for r in runs):  # the input moves between runs
        lines.append("  one sample's decode (the arithmetic's input), run by run: "
                     + ", ".join(_sample_cost(r) for r in runs) + "; workers needed: "
                     + ", ".join(f"{r['workers_needed']:.1f}" for r in runs))
    around = sorted(set(knees), key=knees.count)[-1]  # the commonest knee
    lines.append(f"  the same knee within one step of the sweep in {within} of {len(runs)} runs"
                 f" -> {'the same' if agree else 'NOT the same'} (knees "
                 f"{', '.join(str(k) for k in knees)}; the tolerance is one step of {counts} either "
                 f"way: around {around} it accepts {_accepted(counts, around)})")
    checked = [p for p in (plateau_now(r) for r in runs) if p]
    held = sum(1 for plateau in checked if plateau["agrees"])
    plateau_agree = held == len(checked)  # held in every run (vacuously, where none recorded one)
    # review 2026-12-04j item 1: the bound the page names, run by run (each run profiles the knee)
    bounds = [bound_name(r) for r in runs if bound_name(r)]
    if bounds:
        most = max(set(bounds), key=bounds.count)
        lines.append(f"  the plateau's bound: '{most}' in {bounds.count(most)} of {len(bounds)} runs"
                     + ("" if len(set(bounds)) == 1 else f" (also {', '.join(sorted(set(bounds) - {most}))})"))
    rounds = [p for p in checked if p.get("round")]
    if rounds:  # review 2026-12-06z 05-07 item 2: the call round by round, where the runs carry rounds
        lines.append(f"  {loader_sweep.round_rule(rounds[0]['round']['rounds'], rounds[0]['tolerance'])}")
        lines.append(f"  the plateau's round-by-round call holds in {held} of {len(checked)} runs ("
                     + ", ".join(f"{loader_sweep.round_text(p['round'])}" if p.get("round") else
                                 f"{p['measured'] / p['predicted']:.2f}x, no rounds: as before"
                                 for p in checked)
                     + ") -> " + ("the same" if plateau_agree else "NOT the same"))
    elif checked:
        lines.append(f"  the plateau's arithmetic held in {held} of {len(checked)} runs "
                     f"(measured / predicted: "
                     + ", ".join(f"{p['measured'] / p['predicted']:.2f}x" for p in checked)
                     + f"; the band is {checked[0]['tolerance']:.0%} either way) -> "
                     + ("the same" if plateau_agree else "NOT the same"))
    out = {"knee_agree": agree, "knees": knees, "within_one_step": within, "runs": len(runs),
           "lines": lines, "plateau_held": held, "plateau_runs": len(checked),
           "bounds": bounds, "bound_agree": len(set(bounds)) <= 1,
           "plateau_agree": plateau_agree}
    knobs = knob_agreement(runs)
    knobs_agree = not knobs or not knobs["differ"]
    if knobs:
        out["knobs"] = knobs
        rules = list(dict.fromkeys(r["knob_rule"] for r in runs if r.get("knob_rule")))
        lines.extend(f"  {rule}" for rule in rules)
        today = {knee_experiment.knob_rule(r["knob_rounds"]) for r in runs if r.get("knob_rounds")}
        lines.extend(f"  re-read by today's rule: {rule}" for rule in sorted(today - set(rules)))
        for i, r in enumerate(runs, start=1):
            lines.append(f"    run {i}: {knob_line(r)}")
        effect = aa_runs_effect(runs)
        if effect:  # the A/A probe's question across runs, at no extra time
            out["aa_runs_effect"] = effect
            lines.append(f"  {knee_experiment.runs_effect_text(effect)}")
        for label, seen in knobs["decisions"].items():
            kind, n = knobs["commonest"][label]
            lines.append(f"  knob {label}: {', '.join(seen)} -> {kind} in {n} of {len(seen)}: "
                         + ("the same" if label in knobs["same"] else "NOT the same"))
    out["knobs_agree"] = knobs_agree
    # the recorded page's own calls against the runs' (review 2026-12-03h item 2)
    if reference == RECORDED:
        reference = reference_calls()
    reference_agree = True
    if isinstance(reference, dict) and _same_set_up(runs, reference):
        against = reference_agreement(runs, reference)
        out["reference"] = against
        reference_agree = not against["differ"]
        for name, (call, n) in against["calls"].items():
            lines.append(f"  {name}: the reference's call ({call}) in {n} of {len(runs)}"
                         + ("" if n == len(runs) else ": NOT reproduced"))
        outliers = against["outliers"]
        if outliers:  # every run called it otherwise: the page, not the runs, is the odd one
            lines.append("  the recorded reference page is the outlier for "
                         f"{', '.join(outliers)}: not reproduced; re-record chapter 05")
    out["reference_agree"] = reference_agree
    # the headline covers every statement the chapter makes from these runs, each in N of N
    out["agree"] = agree and plateau_agree and knobs_agree and reference_agree
    lines.append(f"  {REPRODUCED_RULE}")
    knob_part = (f"knob gain / no gain the same in every run for {len(knobs['same'])} of "
                 f"{len(knobs['decisions'])} knobs" if knobs else "knob calls: none measured")
    plateau_part = (f"plateau held in {held} of {len(checked)}" if checked
                    else "plateau: none recorded")
    lines.append(f"  chapter 05's numbers: knee within one step in {within} of {len(runs)}, "
                 f"{plateau_part}, {knob_part} -> "
                 f"{'reproduced' if out['agree'] else 'NOT reproduced'}")
    return out


INTERVAL = "geometric mean [95% interval]"


def aa_runs_effect(runs: Sequence[Mapping]) -> dict | None:
    """knee_experiment.runs_effect over the runs' A/A per-round ratios (knob_round_ratios):
    whether the A/A's mean moves from run to run more than its rounds predict. None with fewer
    than two runs that recorded them."""
    groups = [next((v for label, v in (r.get("knob_round_ratios") or {}).items()
                    if label.endswith(knee_experiment.A_A) and v), None) for r in runs]
    return knee_experiment.runs_effect([g for g in groups if g])


def knob_line(run: dict) -> str:
    """One run's knob calls in one line, each with its interval ('uint8 1.31x [1.20, 1.45]
    gain; ...'; a run recorded under the older rule, without 'knob_ratios_are', shows its
    median and the rounds' range, '1.31x (1.20-1.45)'), and its A/A row's median ratio when it
    ran before the baseline against after (an order effect)."""
    run = rebased_run(run)
    ratios = run.get("knob_ratios") or {}
    interval = run.get("knob_ratios_are") == INTERVAL
    parts = []
    against = run.get("knob_against") or {}
    steps = run.get("knob_increments") or {}
    base = _baseline(run)
    for label, decision in run_decisions(run).items():
        ratio, low, high = (ratios.get(label) or [None, None, None])[:3]
        shown = ("" if None in (ratio, low, high) else f" {ratio:.2f}x [{low:.2f}, {high:.2f}]"
                 if interval else f" {ratio:.2f}x ({low:.2f}-{high:.2f})")
        ref = against.get(label)
        step = steps.get(label)
        beside = ("" if not step or None in step[:3] else
                  f" (over {_step_name(step[3], base)}: {step[0]:.2f}x [{step[1]:.2f}, {step[2]:.2f}], shown, not called)")
        if (label.endswith(knee_experiment.A_A) and interval and None not in (ratio, low, high)
                and knee_experiment.judge_interval(ratio, low, high) in (knee_experiment.GAIN, knee_experiment.LOSS)
                and decision not in (knee_experiment.GAIN, knee_experiment.LOSS)):  # review 2026-12-04n item 4
            decision = (f"{decision} by the control's {100 * knee_experiment.CONTROL_LEVEL:.2f}% interval "
                        f"({knee_experiment.judge_interval(ratio, low, high)} at 95%: about 1 run in 20)")
        parts.append(f"{label}{f' (vs {ref})' if ref and ref != base else ''}{shown} {decision}{beside}")
    reach = knee_experiment.control_reach([{"label": label, **dict(zip(
        ("ratio", "ratio_low", "ratio_high"), (list(v or []) + [None] * 3)[:3], strict=True))}
        for label, v in ratios.items()]) if interval else None
    if reach is not None:  # review 2026-12-04m item 2: the run's resolution, the A/A's reach
        aa = next((d for label, d in run_decisions(run).items() if label.endswith(knee_experiment.A_A)), None)
        failed = ("; the A/A itself was called: control failed, no knob call of this run stands on a page"
                  if aa in (knee_experiment.GAIN, knee_experiment.LOSS) else "")
        parts.append(f"the A/A's reach (its distance from 1 times its half-width): x{reach:.2f}{failed}")
    by_order = run.get("aa_by_order") or {}
    if by_order.get("before_median") is not None and by_order.get("after_median") is not None:
        parts.append(f"A/A ran before the baseline {by_order['before_median']:.2f}x "
                     f"({len(by_order['before'])} rounds), after it {by_order['after_median']:.2f}x "
                     f"({len(by_order['after'])} rounds)")
    return "; ".join(parts) or "no knobs measured"


def _sample_cost(run: dict) -> str:
    """One run's per-sample decode in ms, with its IQR where recorded."""
    iqr = run.get("sample_cost_iqr_s")
    return f"{run['sample_cost_s'] * 1e3:.2f} ms" + (f" (IQR {iqr * 1e3:.2f})" if iqr is not None else "")


def _accepted(counts: Sequence[int], around: int) -> str:
    """The swept counts within one step of `around` ('4, 8 or 12: 3 of the 5 counts')."""
    ordered = sorted(counts)
    near = [w for w in ordered if around in ordered and loader_sweep.steps_apart(ordered, w, around) <= 1]
    names = ", ".join(str(w) for w in near[:-1]) + (" or " if len(near) > 1 else "") + str(near[-1])
    return f"{names}: {len(near)} of the {len(ordered)} counts"


def _agreement(run: dict) -> str:
    """The arithmetic's agreement with the knee, with the tolerance it was judged at: one step
    of the sweep either way, the counts that passes named (review 2026-12-03d item 6: a
    coarse test says how coarse)."""
    if run.get("agrees") is None:
        return "the grid cannot test it"
    counts, arithmetic = run.get("worker_counts") or [], run.get("arithmetic_workers")
    band = (f": within one step of the sweep, which accepts {_accepted(counts, arithmetic)}"
            if arithmetic in counts else "")
    return ("agrees" if run["agrees"] else "DISAGREES") + band


def bound_name(run: Mapping) -> str:
    """The plateau's bound a run recorded, in a few words (loader_sweep.Plateau.bound_name's
    reading of the 'bound' sentence); '' where none was recorded."""
    bound = str(((run.get("plateau") or {}).get("bound")) or "")
    return bound.split(":")[0].split(" (")[0]


def _tolerance(plateau: dict) -> float:
    return float(plateau.get("tolerance") or loader_sweep.PLATEAU_TOLERANCE)


def _plateau_band(plateau: dict) -> str:
    """'1.16x, outside the 15% band: MISSES': the ratio the check reads, and its band; 'the
    step drifted (63 ms, then 38 ms): no prediction' where it did (review 2026-12-04k item 1);
    'round by round 0.98x [0.93, 1.04]: holds' where the record was timed round by round (review
    2026-12-06z 05-07 item 2)."""
    check = plateau.get("round")  # plateau_now's dict; else a record's figures
    if not check and round_figures(plateau, plateau.get("batch_size")):
        check = (plateau_now({"plateau": plateau}) or {}).get("round")
    if check:
        return f"round by round {loader_sweep.round_text(check)}"
    if plateau.get("drift"):
        if plateau.get("loaded_times_s"):  # the rounds recorded: which arm drifted, in its words
            try:
                said = loader_sweep.Plateau.from_record(plateau).drift_text()
            except (TypeError, ValueError):  # a record's keys not enough to rebuild it: as below
                said = ""
            if said:
                return said
        first, then = plateau["drift"]
        return f"the step drifted ({first * 1e3:.0f} ms, then {then * 1e3:.0f} ms): no prediction"
    ratio = plateau["measured"] / plateau["predicted"]
    inside = plateau["agrees"]
    return (f"{ratio:.2f}x, {'within' if inside else 'outside'} the {_tolerance(plateau):.0%} band"
            f"{'' if inside else ': MISSES'}")


def _increment(step: Mapping) -> list:
    """A knob_table row's increment as a run records it: [geometric mean, low, high, over]."""
    return [step.get("ratio"), step.get("ratio_low"), step.get("ratio_high"), step.get("over")]


def _step_name(label: str, base: str) -> str:
    """A row's label as its change from the baseline ('w8 b64 pin' over 'w8 b64': '+ pin')."""
    return f"+ {label[len(base):].strip()}" if base and label.startswith(base) and label != base else label


def _baseline(run: Mapping) -> str:
    """The baseline's label of a run's knob sweep (its A/A row's label without ' (A/A)')."""
    return next(iter(run.get("knob_decisions") or {}), "").removesuffix(" (A/A)")


def rebased_run(run: dict) -> dict:
    """A run's knob calls with every row against the baseline (issue 39): a run recorded
    before the fix read the ladder's top row against + pin ('knob_against'); where it
    recorded its per-round ratios as intervals (INTERVAL), that row is re-judged against the
    baseline from its rounds times + pin's (knee_experiment.rebased) and its old reading kept
    as its increment ('knob_increments', shown, not called). Else the run as it was."""
    against = run.get("knob_against") or {}
    base = _baseline(run)
    rounds = run.get("knob_round_ratios") or {}
    if (run.get("knob_ratios_are") != INTERVAL or not rounds
            or all(ref in (None, base) for ref in against.values())):
        return run
    ratios = run.get("knob_ratios") or {}
    table = [{"label": base}] + [
        {"label": label, "against": against.get(label, base), "decision": decision,
         "round_ratios": rounds.get(label), "level": knee_experiment.KNOB_LEVEL,
         **dict(zip(("ratio", "ratio_low", "ratio_high"), (ratios.get(label) or [None] * 3)[:3], strict=True))}
        for label, decision in (run.get("knob_decisions") or {}).items()]
    again = knee_experiment.rebased(table)[1:]
    return {**run, "knob_decisions": {r["label"]: r["decision"] for r in again},
            "knob_ratios": {r["label"]: [r.get("ratio"), r.get("ratio_low"), r.get("ratio_high")] for r in again},
            "knob_round_ratios": {r["label"]: r.get("round_ratios") for r in again},
            "knob_against": {r["label"]: r["against"] for r in again},
            "knob_increments": {**(run.get("knob_increments") or {}),
                                **{r["label"]: _increment(r["increment"]) for r in again if r.get("increment")}}}


def run_decisions(run: dict) -> dict[str, str]:
    """One run's knob calls under today's rule, each against the baseline (rebased_run):
    re-judged from each interval where the run recorded one ('knob_ratios_are' INTERVAL: an
    older band's "no clear difference" becomes "no difference" or "not resolved"), else as
    recorded with that old label read as not resolved (it was neither a gain nor a loss)."""
    run = rebased_run(run)
    ratios = run.get("knob_ratios") or {}
    interval = run.get("knob_ratios_are") == INTERVAL
    out = {}
    for label, decision in (run.get("knob_decisions") or {}).items():
        mean, low, high = (list(ratios.get(label) or []) + [None, None, None])[:3]
        if interval and None not in (mean, low, high):
            out[label] = knee_experiment.judge_interval(mean, low, high)
        else:
            out[label] = (knee_experiment.NOT_RESOLVED if decision == knee_experiment.OLD_NO_CLEAR
                          else decision)
    if not interval:
        return out
    # review 2026-12-04m item 2: a gain or a loss clears the A/A's reach in that run, as the page
    table = [{"label": _baseline(run)}] + [
        {"label": label, "decision": decision, "rounds": run.get("knob_rounds"),
         "round_ratios": (run.get("knob_round_ratios") or {}).get(label),
         **dict(zip(("ratio", "ratio_low", "ratio_high"), (list(ratios.get(label) or []) + [None] * 3)[:3],
                    strict=True))}
        for label, decision in out.items()]
    return {row["label"]: row["decision"] for row in knee_experiment.controlled(table)[1:]}


GAIN_KINDS = {knee_experiment.GAIN: "gain", knee_experiment.LOSS: "loss"}  # every other call: no gain
NOT_MEASURED = "not measured"


def gain_kind(decision: str) -> str:
    """A knob call as issue 39's check reads it: 'gain', 'loss', or 'no gain' (no difference,
    not resolved, one round: the chapter does not call it a gain); 'not measured' as it is."""
    return decision if decision == NOT_MEASURED else GAIN_KINDS.get(decision, "no gain")


KNEE_TOKEN = re.compile(r"^w\d+\s+")  # a setting label's worker count ('w8 b64 pin': 'w8 ')


def at_knee(label: str) -> str:
    """A knob's name across runs: its label without the worker count ('w8 b64 pin' and 'w4
    b64 pin': 'b64 pin'). Each run measures its knobs at its own knee, and the knees may differ
    by a step (the rule accepts that): the 2026-12-04 16:07 H200 reproduce ran its third
    run's knobs at 4 workers, and every knob read 'not measured' there under its literal label."""
    return KNEE_TOKEN.sub("", label)


def knob_agreement(runs: Sequence[dict]) -> dict:
    """Across runs: each knob's call in every run that measured knobs (run_decisions), its
    gain / no gain (gain_kind) in each, and the knobs whose gain / no gain was the same in
    all of them, measured in every one ('same'), against the rest ('differ'). Issue 39 asks
    for 3 of 3; review 2026-12-03g item 4: 'gain, not resolved, not resolved' passed as 'no
    contradiction' while the chapter printed 'a gain' from one run. 'commonest' gives each
    knob's commonest kind and in how many runs. {} when no run measured knobs."""
    measured = [{at_knee(label): call for label, call in run_decisions(r).items()}
                for r in runs if r.get("knob_decisions") is not None]
    if not measured:
        return {}
    labels = list(dict.fromkeys(label for d in measured for label in d))
    decisions = {label: [d.get(label, NOT_MEASURED) for d in measured] for label in labels}
    kinds = {label: [gain_kind(d) for d in seen] for label, seen in decisions.items()}
    commonest = {}
    for label, seen in kinds.items():
        kind = max(dict.fromkeys(seen), key=seen.count)
        commonest[label] = (kind, seen.count(kind))
    same = [label for label, seen in kinds.items() if len(set(seen)) == 1 and seen[0] != NOT_MEASURED]
    return {"decisions": decisions, "kinds": kinds, "commonest": commonest, "same": same,
            "differ": [label for label in labels if label not in same], "runs": len(measured)}


def reference_knob_runs(machine: str = results.DEFAULT_REFERENCE) -> dict[str, list[dict]]:
    """Each knob's ratio in every run of the reference's reproduce record (review 2026-12-04m
    item 2: the page's tuned row read 1.29x [1.24, 1.34] and the three reproduce runs 1.33x,
    1.42x and 1.51x, two of them outside that interval): {knob name across runs (at_knee):
    [{'ratio', 'low', 'high', 'control_failed'}, ...]}, one entry a run in its order, where
    'control_failed' says the run's A/A was itself called a gain or a loss. {} without a
    readable record."""
    from labkit.claims import reproduced

    try:
        record = reproduced.load_record(reproduced.record_path(machine, CHAPTER))
    except reproduced.ReproduceRecordError:
        return {}
    out: dict[str, list[dict]] = {}
    for run in (r for r in (record or {}).get("numbers") or [] if isinstance(r, Mapping)):
        if run.get("knob_ratios_are") != INTERVAL:
            continue
        run = rebased_run(dict(run))
        decisions = run_decisions(run)
        failed = any(label.endswith(knee_experiment.A_A) and d in (knee_experiment.GAIN, knee_experiment.LOSS)
                     for label, d in decisions.items())
        for label, values in (run.get("knob_ratios") or {}).items():
            ratio, low, high = (list(values or []) + [None] * 3)[:3]
            if ratio is not None:
                out.setdefault(at_knee(label), []).append(
                    {"ratio": ratio, "low": low, "high": high, "control_failed": failed,
                     "decision": decisions.get(label)})
    return out


_RUN_CALLS = {knee_experiment.GAIN: "a gain", knee_experiment.LOSS: "a loss",
              knee_experiment.NO_DIFFERENCE: "no difference", knee_experiment.NOT_RESOLVED: "not resolved"}


def runs_text(seen: Sequence[Mapping], row: Mapping | None = None) -> str:
    """'1.33x, 1.42x, 1.51x (run 3: its control failed): a gain in all 3; 2 of 3 outside this
    interval, which covers one run's rounds, not a new run': a knob's ratio run by run
    (reference_knob_runs), the runs' own call where they all made the same one, and, given
    this page's row, how many lie outside its interval and why that is no contradiction
    (review 2026-12-05q browser 05-07 item 9: '1.29x [1.24, 1.34]: a gain' beside '2 of 3
    outside this interval' read as one at a glance)."""
    text = ", ".join(f"{s['ratio']:.2f}x" for s in seen)
    failed = [str(i) for i, s in enumerate(seen, start=1) if s["control_failed"]]
    if failed:
        text += f" (run {', '.join(failed)}: its control failed)"
    calls = {s.get("decision") for s in seen}
    if len(calls) == 1 and None not in calls and len(seen) > 1:
        call = calls.pop()
        text += f": {_RUN_CALLS.get(call, call)} in all {len(seen)}"
    if row is not None and row.get("ratio_low") is not None and row.get("ratio_high") is not None:
        out = sum(1 for s in seen if not row["ratio_low"] <= s["ratio"] <= row["ratio_high"])
        text += f"; {out} of {len(seen)} outside this interval"
        if out:
            text += ", which covers one run's rounds, not a new run"
    return text
