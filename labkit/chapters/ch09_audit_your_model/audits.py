"""Chapter 09's set-up, audits and tables: what the notebook used to write out by hand.

The notebook imported five labkit modules, copied the session's fields into globals, defined
`run_audit`, `show` and its takeaway lines itself and printed each report (about 500 words per
network) with the reference GPU's summary under it (`if not on_gpu: ...`). Here the same audit
runs with the same settings, the same summary is recorded under the same key
(`audit_resnet50`, ...: results/nvidia-h200.json is read by it), and a report is shown as one
`labkit.show.table.Table`: the summary's readings in a column for this run and, where the
chapter runs on a CPU, one for the reference GPU's recorded run (labelled recorded), with the
full report and the reference's summary folded (opened on request).
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace

import torch

from labkit.audit import audit, export_audit, kernels, models, recommend, report
from labkit.audit.module_layouts import ROOT, human_bytes
from labkit.core import results
from labkit.session import Chapter, Recorded
from labkit.show import table as tables

# Export paths are checked on the batch's first EXPORT_BATCH images: what a path records and
# whether it is right on a layout do not depend on the batch; ONNX Runtime's CPU runs' cost does.
EXPORT_BATCH = 8


@dataclass(frozen=True)
class Setup:
    """Where and how big the chapter's audits run.

    On a GPU: every export path but AOTInductor (minutes of compile per network:
    `python -m labkit.audit` runs it), the fix timed for 5 rounds of 200 ms. On a CPU: the
    in-process trace only (torch.export and ONNX cost tens of seconds each there; chapter 07
    runs them), 3 rounds of 300 ms. The image side is the session's (`sizes.cnn_image`, which
    the chapter's first line prints), so the header and the sizes line agree (review 2026-12-04i
    08-09-99 item 11: the CPU header read 64x64 beside a sizes line of 112).
    """

    device: str
    batch: int
    image: int
    export_paths: tuple[str, ...]
    rounds: int
    rep_ms: float
    networks: dict[str, str]

    def table(self) -> tables.Table:
        """The networks audited and the sizes, one row per network."""
        shown = tables.Table(f"The chapter's audits: batch {self.batch}, {self.image}x{self.image} "
                             f"images, on {self.device}", ["network", "loaded as"],
                             [[name, spec] for name, spec in self.networks.items()])
        against = export_audit.reference_math(self.device, export_audit.tf32_flags())
        shown.note(f"export paths checked here: {', '.join(self.export_paths)} "
                   f"(on {_export_images(self.batch)}, against {against})")
        aoti = aoti_recorded()
        if aoti:
            shown.note(aoti)
        return shown.note(f"keep rule for a fix: {recommend.rule()}")


def _export_images(batch: int) -> str:
    """Which images the export paths are checked on: the batch's first EXPORT_BATCH, or the whole
    batch where it is smaller (review 2026-12-05t 09 item 8: 'the batch's first 8 images' at
    batch 2 on the CPU page)."""
    return (f"the batch's first {EXPORT_BATCH} images" if batch > EXPORT_BATCH
            else f"the whole batch ({batch} image{'s' if batch != 1 else ''})")


AOTI_CHAPTER, AOTI_KEY = "07_export_traps", "aoti"


def aoti_recorded(machine: str = results.DEFAULT_REFERENCE) -> str:
    """Why AOTInductor is left to the command, from chapter 07's recorded AOTInductor build on
    the reference GPU (its seconds and date, as 07's page prints them), not typed into the
    chapter's prose (review 2026-12-04m fix round: a number from a record is printed from it);
    '' where nothing is recorded."""
    entry = (results.load(machine) or {}).get("chapters", {}).get(AOTI_CHAPTER, {}).get(AOTI_KEY) or {}
    payload = entry.get("payload") or {}
    row = next((r for r in payload.get("rows") or [] if r.get("path") == "AOTInductor"), None)
    if not row or row.get("build_s") is None:
        return ""
    return (f"AOTInductor, left to the command: {row['build_s']:.0f} s to build chapter "
            f"07's small network on the reference GPU (recorded "
            f"{payload.get('measured_at') or str(entry.get('recorded_at', ''))[:10]})")


def setup(on_gpu: bool, batch: int, image: int | None = None) -> Setup:
    """The chapter's settings for a GPU or a CPU run (see `Setup`): image is the session's
    `sizes.cnn_image` (None: 224 on a GPU, 64 on a CPU, the sizes of a test's call)."""
    for name, value in (("batch", batch), ("image", 1 if image is None else image)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    side = image if image is not None else 224 if on_gpu else 64
    return Setup(device="cuda" if on_gpu else "cpu", batch=batch, image=side,
                 export_paths=(tuple(p for p in audit.exports.PATHS if p != "aoti") if on_gpu
                               else ("trace",)),
                 rounds=5 if on_gpu else 3, rep_ms=200.0 if on_gpu else 300.0,
                 networks=dict(models.chapter_networks()))


def run(where: Setup, name: str, dtype: str = "float32",
        export_paths: tuple[str, ...] | None = None) -> audit.Report:
    """Audit one of the chapter's networks in channels_last, quietly (random weights, seed 0,
    BatchNorm calibrated: `models.calibrate_batchnorm`, so the numerics check sees signal), in
    dtype, checking export_paths (the set-up's when None)."""
    if name not in where.networks:
        raise KeyError(f"no network {name!r} in this chapter; its networks: {list(where.networks)}")
    torch.manual_seed(0)
    model = models.calibrate_batchnorm(models.load(where.networks[name], image=where.image), where.image)
    torch.manual_seed(0)
    example = torch.randn(where.batch, 3, where.image, where.image)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit.run(model, example, device=where.device, memory_format="channels_last",
                         name=where.networks[name],
                         export_paths=where.export_paths if export_paths is None else export_paths,
                         export_batch=EXPORT_BATCH, recommend_rounds=where.rounds,
                         recommend_rep_ms=where.rep_ms, dtype=dtype)


def run_yours(where: Setup, model: torch.nn.Module, example: torch.Tensor,
              memory_format: str = "contiguous") -> audit.Report:
    """Audit the learner's model (the in-process trace only, the fix timed 3 rounds of 200 ms)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit.run(model, example, device=where.device, memory_format=memory_format,
                         name="my model", export_paths=("trace",), recommend_rounds=3,
                         recommend_rep_ms=200.0)


class Apply(torch.nn.Module):
    """A function as a module, so the chapter's placeholder model can hold a step written as a
    plain function in the notebook (the code under study) and the audit's hooks still see it
    as one module with its own row."""

    def __init__(self, function: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        if not callable(function):
            raise TypeError(f"Apply takes a function of a tensor, got {function!r}")
        self.function = function

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.function(x)

    def extra_repr(self) -> str:
        return getattr(self.function, "__name__", repr(self.function))


# ---------------------------------------------------------------- a summary as a column

def _ratio(r: Mapping, busy_expected: bool = False) -> str:
    if r.get("timing_of"):
        return " (same variant as above: its timing decides)"
    if r.get("ratio") is None:
        return ""
    clock = f", {r['clock']}" if r.get("clock") else ""
    wall = ""
    if r.get("wall_ratio") is not None and r.get("wall_clock") and r["wall_clock"] != r.get("clock"):
        wall = (f"; the batch's own time {r['wall_ratio']:.2f}x, IQR {r['wall_q25']:.2f}-"
                f"{r['wall_q75']:.2f}: " + ("faster" if r.get("wall_faster") else
                                             "slower" if r["wall_q25"] > 1 else "no measured gain")
                + recommend.noisy_note(r["wall_ratio"], r["wall_q25"], r["wall_q75"]))
    return (f" ({r['ratio']:.2f}x, per-round IQR {r['ratio_q25']:.2f}-{r['ratio_q75']:.2f}"
            f"{recommend.clock_name(clock)}{wall}{_busy(r, busy_expected)})")


def _busy(r: Mapping, expected: bool = False) -> str:
    """'; device-busy time (kernel records) 1.15x, IQR 1.14-1.16: slower' where the fix was also
    timed on the device's own clock beside the stream's (review 2026-12-05t 08-09-99 item 9: CUDA
    events time the stream, idle gaps included); on a GPU record made before that, it says the
    record has no device-busy time (`expected`: a reduced-precision GPU audit, which times both);
    '' on a CPU or where the stream's clock did not judge."""
    if r.get("busy_ratio") is not None:
        word = recommend.decide(r["busy_ratio"], r["busy_q25"], r["busy_q75"])
        return (f"; {recommend.BUSY_CLOCK} {r['busy_ratio']:.2f}x, IQR {r['busy_q25']:.2f}-"
                f"{r['busy_q75']:.2f}: " + ("faster" if word == recommend.KEPT else word))
    if r.get("busy_unavailable"):  # asked for and lost (the profiler's records), not an old record
        return f"; device-busy time: not read ({r['busy_unavailable']})"
    if expected and recommend.clock_name(r.get("clock") or "") == recommend.STREAM_CLOCK:
        return "; device-busy time: not timed in this record (recorded before the audit timed it)"
    return ""


def _decision(r: Mapping) -> str:
    """'kept', or 'not kept: too noisy to call' (a recorded summary older than the outcome
    field says only 'not kept')."""
    if r["kept"]:
        return "kept" + (", noisy rounds" if r.get("noisy") else "")
    return "not kept" + (f": {r['outcome']}" if r.get("outcome") else "")


def _module(name: str, kinds: Mapping[str, str]) -> str:
    """A finding's module as a reader can find it: its name and class ('1: Apply', 'the model
    itself: VisionTransformer'), where the bare name said '1 (1)' or '((model))'."""
    label = "the model itself" if name == ROOT else name
    return f"{label}: {kinds[name]}" if name in kinds else label


NOT_CHECKABLE = "not checkable"
ALL_ZERO = "its outputs are all zeros"


def readings(summary: Mapping) -> dict[str, str]:
    """A recorded or fresh `report.summary` as reading -> value, in the report's order: the
    model and the input (its dtype always, and on a GPU the TF32 state) first."""
    precision = report.precision(summary.get("dtype", "float32"), summary.get("tf32"),
                                 summary["device"])
    out = {"model": summary["model"],
           "input": f"{tuple(summary['input_shape'])} {precision} on {summary['device']}, "
                    f"{summary['memory_format']}"}
    kinds = summary.get("module_kinds") or {}
    in_tf32 = bool(traced_in_tf32(summary, summary["exports"]))
    for kind, names in summary["findings"].items():
        named = [_module(n, kinds) if kind in ("layout drops", "hidden copies") else
                 f"{n} (traced in TF32)" if in_tf32 and n == "torch.jit.trace" else n for n in names]
        out[kind] = str(len(names)) + (f" ({', '.join(named[:2])}{', ...' if len(named) > 2 else ''})"
                                       if names else "")
    out["bytes copied in one forward"] = human_bytes(summary["copy_bytes"])
    k = summary.get("kernels")
    if k:
        bound = f"; {kernels.bound_text(k)}" if kernels.bound_text(k) else ""
        out["copy and layout work"] = f"{100 * k['copy_share']:.1f}% of {k['share_of']}{bound}"
    first = next((r for r in summary["recommendations"] if r.get("output_scale") is not None), None)
    # an all-zero output agrees with anything: a record from before the outcome existed (the
    # H200's ViT, review 2026-12-03g item 5) is read as not checkable too
    zero = first is not None and first["output_scale"] == 0
    built = [e for e in summary["exports"] if e["outcome"] != "skipped"]
    vacuous = [e for e in built if zero or e["outcome"] == NOT_CHECKABLE]
    checked = [e for e in built if e not in vacuous]
    # a record from before the check was run in strict float32 (review 2026-12-03g item 4):
    # its float32 exports were compared with TF32 eager, which a correct one can miss by 2%
    tf32_eager = (checked and not any(e.get("checked_against") for e in checked)
                  and any((summary.get("tf32") or {}).values()))
    out["export paths correct on this layout"] = (
        f"{sum(e['outcome'] == 'correct' for e in checked)} of {len(checked)} checked"
        + (" against TF32 eager" if tf32_eager else "")
        + (f"; {len(vacuous)} {NOT_CHECKABLE}: {ALL_ZERO}" if vacuous else "")
        + traced_in_tf32(summary, checked))
    if zero:
        out["channels_last against NCHW: numerics"] = f"{NOT_CHECKABLE} ({ALL_ZERO})"
    elif first is not None:
        out["channels_last against NCHW: numerics"] = (
            f"max |error| {first['max_error'] * first['output_scale']:.2g} against outputs up to "
            f"{first['output_scale']:.3g}")
    for r in summary["recommendations"]:
        # the host's side of a fix the device's clock judged (review 2026-12-05o 08-09-99 item 5)
        launched = recommend.launches_text(r.get("launches"))
        busy_expected = summary["device"].startswith("cuda") and summary.get("dtype", "float32") != "float32"
        # a gain on a model of one convolution is that convolution's (review 2026-12-05u item 8:
        # ViT's 0.97x kept on a CPU; a record made before the field says nothing)
        convs = r.get("convolutions") or []
        small = r.get("kept") and r.get("ratio") is not None and r["ratio"] > 1 - SMALL_GAIN
        one = f"; its one convolution: {convs[0]}" if len(convs) == 1 and small else ""
        out[r["title"]] = (_decision(r) + _ratio(r, busy_expected) + one
                           + (f"; {launched}" if launched else ""))
    seconds = summary.get("seconds") or {}
    if seconds.get("total") is not None:  # where a room's wait goes, on each machine
        out["the audit's own time"] = own_time(seconds)
    return out


def own_time(seconds: Mapping[str, float]) -> str:
    """'6.3 s (most in modules, 2.0 s)': the total and its largest phase, which is where a room's
    wait goes; every phase is in the folded full report (the table's row listed all five, 12
    words in each column of three audits: the CPU page ran past 1,500 words on 2026-12-04)."""
    phases = {k: v for k, v in seconds.items() if k != "total"}
    if not phases:
        return f"{seconds['total']:.1f} s"
    name, most = max(phases.items(), key=lambda kv: kv[1])
    return f"{seconds['total']:.1f} s (most in {name}, {most:.1f} s)"


def traced_in_tf32(summary: Mapping, checked: Sequence[Mapping]) -> str:
    """'; the trace ran in TF32 ...' for a record made before the export paths
    were built with TF32 off (no 'built_tf32_off' field), on a GPU whose convolutions ran in
    TF32, where the trace read 'silently wrong': a trace keeps the TF32 setting it was traced
    under and was compared with a strict float32 reference, so its error was TF32's, not a
    layout's (review 2026-12-03h item 1); '' otherwise."""
    trace = next((e for e in checked if e["path"] == "torch.jit.trace"), None)
    tf32_convs = summary["device"].startswith("cuda") and (summary.get("tf32") or {}).get("convolutions")
    if (trace is None or "built_tf32_off" in trace or not tf32_convs
            or "silently wrong" not in (trace["outcome"], *trace.get("others", {}).values())):
        return ""
    return "; the trace ran in TF32 against strict float32: not like for like"


APART_AGAIN = "The columns differ as in the table above."


def audit_table(result: audit.Report, recorded: Recorded | None = None,
                apart_said: str = "") -> tables.Table:
    """One audit as a table: its readings here and, if given, the reference run's recorded
    ones beside them (a `labkit.session.Recorded`); the full report and the reasons folded.
    apart_said: the differences line a table above already printed; the same line is then said
    in short (APART_AGAIN), not again in full under each network."""
    here = readings(report.summary(result))
    reference = None if recorded is None else recorded.value
    there = readings(reference) if isinstance(reference, Mapping) else {}
    columns = ["reading", f"here ({result.device})"]
    if recorded is not None:
        columns.append("reference GPU" + (" (recorded)" if reference is not None else ""))
    shown = tables.Table(f"Audit of {result.model}", columns)
    for name in dict.fromkeys([*here, *there]):
        row = [name, here.get(name, "-")]
        if recorded is not None:
            row.append(there.get(name, "-") if reference is not None else "-")
        shown.add(*row)
    if recorded is not None:
        shown.note(f"reference GPU: {recorded.label}")
        if isinstance(reference, Mapping):
            apart = differences(report.summary(result), reference)
            if apart:
                shown.note(APART_AGAIN if apart == apart_said else apart)
    shown.fold("why each recommendation was or was not kept",
               "\n".join(f"{r.title}: {r.why}" for r in result.recommendations))
    shown.fold("the full report (every section)", report.text(result))
    if isinstance(reference, Mapping):
        shown.fold("the reference GPU's summary, as recorded", report.summary_text(reference))
    return shown


# a kept gain under this share on a model of one convolution says whose it is (`readings`)
SMALL_GAIN = 0.05
FP16_KEY = "audit_resnet50_fp16"
FP16_READINGS = ("model", "input", "copy and layout work")
FP16_FIXES = ("convert to channels_last", "keep BatchNorm float32")


def fp16_table(chapter: Chapter, where: Setup) -> tables.Table:
    """ResNet-50 audited again in float16, the precision chapter 08's ladder deploys (review
    2026-12-03e item 6: the float32 audit's GPU timing is a TF32 timing, not a deployment's).

    On a GPU it runs (no export paths: whether a path is right on a layout does not depend on
    the precision, and they were checked in float32 above) and is recorded under FP16_KEY; on a
    CPU it is not run, the reason is said, and the reference GPU's recorded run is shown."""
    if chapter.on_gpu:
        result = run(where, "ResNet-50", dtype="float16", export_paths=())
        chapter.record(FP16_KEY, report.summary(result))
        mine, there, label = report.summary(result), None, ""
    else:
        recorded = chapter.reference(FP16_KEY)
        mine, there = None, recorded.value if isinstance(recorded.value, Mapping) else None
        label = recorded.label
    shown = tables.Table("ResNet-50 in float16", ["reading", f"here ({where.device})" if mine
                                                  else "reference GPU (recorded)"])
    first = [readings(s) for s in (mine, there) if s]
    if first:
        r = first[0]
        # channels_last's decision, then keeping the half BatchNorms float32 (chapter 08's fp16
        # rung), where the audit timed it (review 2026-12-04n 08-09-99 item 2)
        decided = [k for k in r if k.startswith(FP16_FIXES)]
        for name in (*FP16_READINGS, *decided):
            shown.add(name, r.get(name, "-"))
    sides = batchnorm_sides(mine or there)
    if sides:
        shown.note(sides)
    if not mine:
        shown.note("Not run on a CPU: float16 is what a GPU deploys (chapter 08).")
        shown.note(f"reference GPU: {label}" if there else "No float16 audit recorded on the reference GPU yet.")
    return shown


def batchnorm_sides(summary: Mapping | None) -> str:
    """Keeping BatchNorm float32 as a trade of the host's time against the device's, both sides
    from the float16 audit's own numbers, and the side chapter 08's fp16 rung took (review
    2026-12-05t 08-09-99 item 3: 08 keeps them float32, 09's audit rejected that on the same
    GPU, and neither page said they weigh the same trade differently); '' where the audit did
    not time the fix or count its launches."""
    r = next((r for r in (summary or {}).get("recommendations", [])
              if r["title"].startswith("keep BatchNorm float32")), None)
    if r is None or r.get("ratio") is None or not r.get("launches"):
        return ""
    before, after = r["launches"]
    device = (f"{r['busy_ratio']:.2f}x the device-busy time" if r.get("busy_ratio") is not None
              else "device-busy time not timed in this record")
    k = (summary.get("kernels") or {})
    idle = k.get("gpu_idle_share")
    limit = kernels.HOST_BOUND_IDLE_SHARE
    # the bound said as a verdict on this audit's own idle, the line beside it (review
    # 2026-12-05u item 4: '(host-bound past 30%)' under a 17% idle read as the verdict)
    bound = ("" if idle is None else
             f"device-bound: under the {100 * limit:.0f}% host-bound line" if idle <= limit else
             f"host-bound: over the {100 * limit:.0f}% line")
    why = "" if idle is None else f" The all-half model idled the GPU {100 * idle:.0f}% in this audit ({bound})."
    verdict = ("keeps them too" if r["kept"] else "does not keep them")
    # no reason typed for chapter 08's side: its ladder sets BatchNorm float32 and never times
    # the choice (review 2026-12-05u item 4: 'near the 30% line' followed from nothing measured)
    return (f"A trade, two clocks: BatchNorm float32 launches {before - after} fewer kernels a "
            f"batch ({before} -> {after}: the host's side) for {r['ratio']:.2f}x the stream's time "
            f"and {device} (the device's side).{why} Chapter 08's fp16 rung sets them float32 "
            "without timing that choice; this audit judges the batch's time on this GPU, the "
            f"device's side, and {verdict}.")


def differences(here: Mapping, there: Mapping) -> str:
    """One line naming how the two columns' runs differ (network, image size, batch, device,
    precision), so a reader compares decisions, not numbers (review 2026-12-03e item 7: the
    CPU's labkit:vit at 64 px, batch 2, beside torchvision:vit_b_16 at 224 px, batch 64)."""
    def size(s: Mapping) -> str:
        shape = list(s["input_shape"])
        return f"{shape[-1]} px" if len(shape) == 4 else str(tuple(shape))
    facts = [("network", lambda s: s["model"]), ("image size", size),
             ("batch", lambda s: str(list(s["input_shape"])[0])), ("device", lambda s: s["device"]),
             ("precision", lambda s: report.precision(s.get("dtype", "float32"), s.get("tf32"),
                                                      s["device"]))]
    # the values are in each column's model and input rows: the line names what differs
    apart = [name for name, get in facts if get(here) != get(there)]
    if not apart:
        return ""
    listed = apart[0] if len(apart) == 1 else ", ".join(apart[:-1]) + " and " + apart[-1]
    # a short line: it is printed under each of the three networks (review 2026-12-04i 08-09-99)
    return f"The columns differ in {listed}: compare decisions, not numbers."


# [the chapter, the differences line it printed last], so its next network's table says the
# same line in short (review 2026-12-04m 08-09-99 item 12: the CPU page's words went to the first
# takeaway); the chapter itself is held, not its id, which a later object could reuse
_APART_SHOWN: list = [None, ""]


def show(chapter: Chapter, result: audit.Report, key: str) -> tables.Table:
    """Record the audit's summary under `key` (this run's, on any machine, as before) and show
    it, beside the reference GPU's recorded summary when the chapter runs on a CPU; under
    ResNet-50's, which harness timed it how (`timed_twice`)."""
    chapter.record(key, report.summary(result))
    recorded = None if chapter.on_gpu else chapter.reference(key)
    said = _APART_SHOWN[1] if _APART_SHOWN[0] is chapter else ""
    shown = audit_table(result, recorded, apart_said=said)
    if isinstance(getattr(recorded, "value", None), Mapping):
        _APART_SHOWN[:] = [chapter, differences(report.summary(result), recorded.value) or said]
    if key == RESNET_KEY:
        line = (timed_twice(report.summary(result), ladder_rung()) if chapter.on_gpu else
                timed_twice(recorded.value, ladder_rung(), recorded=True)
                if isinstance(recorded.value, Mapping) else "")
        if line and chapter.on_gpu:
            shown.note(line)
        elif line:  # the reference's two clocks, folded on a CPU page (session aa: 1,503 core words)
            shown.fold("timed twice on the reference GPU (recorded)", line)
    return shown


RESNET_KEY = "audit_resnet50"
LADDER_CHAPTER, LADDER_KEY, LADDER_RUNG = "08_inference_ladder", "ladder", "channels_last"


def ladder_rung(machine: str = results.DEFAULT_REFERENCE) -> dict | None:
    """Chapter 08's recorded channels_last rung on the reference GPU (eager, float32, TF32 on,
    channels_last, batch 64: this audit's ResNet-50 configuration), with the ladder's image side
    and the date it was recorded; None where it is not recorded."""
    entry = ((results.load(machine) or {}).get("chapters", {}).get(LADDER_CHAPTER, {}).get(LADDER_KEY))
    payload = (entry or {}).get("payload") or {}
    rung = next((r for r in payload.get("rungs") or [] if r.get("name") == LADDER_RUNG), None)
    if rung is None:
        return None
    return {**rung, "image": payload.get("image"), "recorded_at": str(entry.get("recorded_at", ""))[:10]}


def timed_twice(summary: Mapping, rung: Mapping | None, recorded: bool = False) -> str:
    """One line: the two timings of the same channels_last network in one audit (the kernels
    line's unprofiled wall and the fix's timing), each with its harness, and chapter 08's
    recorded rung where it is the same configuration (review 2026-12-04m 08-09-99 item 10: the
    kernels line read 9.86 ms per batch where 08's rung read 7.90 ms wall, the device's time
    7.51 and 7.49 ms: the harnesses differed, the network did not). '' on a CPU's summary."""
    k = summary.get("kernels") or {}
    fix = next((r for r in summary["recommendations"] if r.get("variant_ms") is not None), None)
    if k.get("wall_ms") is None or fix is None:
        return ""
    how = k.get("wall_timing") or kernels.EARLIER_WALL_TIMING
    rounds = k.get("wall_rounds_ms") or []
    if len(rounds) > 1:  # each round in the order timed: a slow first round shows a warming GPU
        how += (f"; rounds {min(rounds):.2f}-{max(rounds):.2f} ms" if max(rounds) / min(rounds) - 1 < 0.01
                else f"; rounds {', '.join(f'{w:.2f}' for w in rounds)} ms")   # within 1%: the range
    # the clock by the name the table row above gives it (review 2026-12-05u item 8), its
    # opening: the row has it whole
    clock = recommend.clock_name(fix["clock"]).split(" per batch")[0] if fix.get("clock") else "the harness"
    line = (f"Timed twice {'on the reference GPU (recorded)' if recorded else 'here'}: the kernels "
            f"line's wall {k['wall_ms']:.2f} ms per batch ({how}), the fix's {fix['variant_ms']:.2f} ms "
            f"({clock})")
    shape = list(summary["input_shape"])
    settings = (rung or {}).get("settings") or {}
    same = (rung is not None and rung.get("median_s") and rung.get("device_s")
            and settings.get("dtype") == summary.get("dtype") and settings.get("channels_last")
            and summary.get("memory_format") == "channels_last" and settings.get("batch") == shape[0]
            and rung.get("image") == shape[-1] and (summary.get("tf32") or {}).get("convolutions")
            and settings.get("tf32") == "on" and not settings.get("compile") and not settings.get("cuda_graphs"))
    if same:
        line += (f"; chapter 08's {LADDER_RUNG} rung, same configuration: {1e3 * rung['median_s']:.2f} ms "
                 f"wall, device {1e3 * rung['device_s']:.2f} ms (recorded {rung['recorded_at']})")
    return line + "."


@dataclass(frozen=True)
class FullReport:
    """An audit's HTML report (every module), folded: the tables a learner opens on request."""

    result: audit.Report

    def _repr_html_(self) -> str:
        body = report.to_html(self.result).split("<body>")[1].split("</body>")[0]
        return (f"<details><summary>The full report of {html.escape(self.result.model)} "
                f"(every module; also written as Markdown and HTML by the command)</summary>"
                f"{body}</details>")

    def __repr__(self) -> str:
        return f"(the full report of {self.result.model}: {len(self.result.modules)} module rows, folded)"


def drift_table(result: audit.Report, name: str) -> tables.Table:
    """Which parameters' strides change with channels_last: decided by shapes alone (so the
    title names the network as the chapter does, not the spec it was loaded from)."""
    first = result.drift_prone[0] if result.drift_prone else None
    return tables.Table(f"{name} parameters whose strides change with channels_last",
                        ["parameters", "count"], [
                            ["drift-prone if converted after DDP", len(result.drift_prone)],
                            ["size-1 dims only (warn harmlessly)", len(result.harmless)],
                            ["first drift-prone", f"{first.name} {first.shape}" if first else "none"]])


# ---------------------------------------------------------------- what to remember

def _first(result: audit.Report | Mapping) -> object | None:
    """The audit's first recommendation (channels_last's, for a network with a convolution): a
    Report's, or a recorded summary's (a dict) with the same attributes, so a takeaway reads the
    reference GPU's recorded audit as it reads this run's."""
    if not isinstance(result, Mapping):
        return result.recommendations[0] if result.recommendations else None
    first = (result.get("recommendations") or [None])[0]
    if first is None:
        return None
    return SimpleNamespace(timed=first.get("ratio") is not None, ratio=first.get("ratio"),
                           ratio_q25=first.get("ratio_q25"), ratio_q75=first.get("ratio_q75"),
                           clock=first.get("clock") or "", outcome=first.get("outcome") or "",
                           kept=bool(first.get("kept")))


def _outcome(result: audit.Report | Mapping) -> str:
    first = _first(result)
    return "not timed" if first is None or not first.timed else first.outcome or (
        "kept" if first.kept else "not kept")


ANSWERS = {1: "one answer", 2: "two answers", 3: "three answers"}


def fix_lead(reports: Sequence[audit.Report | Mapping], where: str = " here") -> str:
    """The first takeaway's lead, from the count of distinct decisions on channels_last:
    'One fix, three answers' only when the networks' audits decided three ways (where: ' here',
    or '' for the reference GPU's recorded audits, which the line names before it)."""
    outcomes = list(dict.fromkeys(_outcome(r) for r in reports))
    if len(outcomes) == 1:
        return f"One fix, the same answer for all {len(reports)} networks{where} ({outcomes[0]}):"
    return f"One fix, {ANSWERS.get(len(outcomes), f'{len(outcomes)} answers')} ({', '.join(outcomes)}):"


def where_copied(mine: audit.Report) -> str:
    """The copies line's end: your model's bytes and the modules the copy detector and forward
    hooks charged them to (review 2026-12-04l 08-09-99 item 11c: 'say which module' followed
    '0 B, 0 B and 0 B', a claim tied to no finding on the page)."""
    if not mine.copy_bytes or not mine.copies:
        return ". Where a copy hides in a total, the copy detector and forward hooks name its module."
    names = ", ".join(dict.fromkeys(_module(row.name, {row.name: row.kind}) for row in mine.copies))
    return (f"; in your model {human_bytes(mine.copy_bytes)}, which the copy detector and forward "
            f"hooks charge to {names}.")


NETWORK_NAMES = ("ResNet-50", "MobileNetV3", "ViT")


def short_kept(name: str, result: audit.Report, outcome: bool = True) -> str:
    """'0.82x on ResNet-50 (kept)', '0.77x on MobileNetV3 (device-busy time, kept)': the first
    takeaway's part for one network (its clock and spread are in the network's table); without
    the outcome where every network's was the same (the lead says it once)."""
    first = _first(result)
    if first is None or not first.timed:
        return f"not timed on {name}"
    said = (["device-busy time"] if first.clock.startswith("device-busy") else []) + (
        [_outcome(result)] if outcome else [])
    return f"{first.ratio:.2f}x on {name}" + (f" ({', '.join(said)})" if said else "")


def quiz_answer(result: audit.Report) -> str:
    """The MobileNetV3 quiz's key: 'yes' where the audit kept channels_last on the clock it judged
    by (the batch's time, or device-busy time where the run is host-bound), else 'no' (review
    2026-12-04m 08-09-99 item 9: the key read the wall ratio beside a verdict on device time)."""
    first = result.recommendations[0] if result.recommendations else None
    return "yes" if first is not None and first.timed and first.kept else "no"


AUDIT_KEYS = (RESNET_KEY, "audit_mobilenetv3", "audit_vit")  # what `show` records, per network


def recorded_audits(chapter: Chapter | None) -> tuple[Mapping, ...] | None:
    """The reference GPU's recorded summaries of the three networks (AUDIT_KEYS), where the
    chapter runs on a CPU and all three are recorded; else None."""
    if chapter is None or chapter.on_gpu:
        return None
    found = tuple(chapter.reference(key).value for key in AUDIT_KEYS)
    return found if all(isinstance(s, Mapping) for s in found) else None


def fix_line(three: Sequence[audit.Report | Mapping], where: str = " here") -> str:
    """The channels_last fix over the three networks: the lead and each network's ratio."""
    return (fix_lead(three, where) + " channels_last over NCHW's time "
            + ", ".join(short_kept(n, r, outcome=len({_outcome(x) for x in three}) > 1)
                        for n, r in zip(NETWORK_NAMES, three, strict=True)))


def takeaways(resnet: audit.Report, mobile: audit.Report, vit: audit.Report,
              mine: audit.Report, chapter: Chapter | None = None) -> Sequence[str]:
    """The chapter's conclusions, each built from the three audits and the learner's: one line
    each (review 2026-12-04m 08-09-99 item 13c: the first ran to ~90 words, the fourth said
    'kept' three times).

    On a CPU (`chapter` given, the reference GPU's three audits recorded), the first line is the
    reference GPU's decisions, labelled recorded; this CPU's own calls stay in each table's first
    column (review 2026-12-04m 08-09-99 item 12: the CPU page's lesson came from a small, shared
    CPU's noisy rounds, the GPU's decisions only in the tables' second column)."""
    three, fixes = (resnet, mobile, vit), mine.recommendations
    kept = [r for r in fixes if r.kept]
    reference = recorded_audits(chapter)
    lead = fix_line(three) if reference is None else fix_line(reference, where="")
    first = lead if reference is None else "On the reference GPU (recorded): " + lead[0].lower() + lead[1:]
    return [
        first + ": a layout is chosen per network and machine, by measuring.",
        f"Layout drops found: ResNet-50 {len(resnet.drops)}, MobileNetV3 {len(mobile.drops)}, "
        f"ViT {len(vit.drops)}; bytes copied in one forward: {human_bytes(resnet.copy_bytes)}, "
        f"{human_bytes(mobile.copy_bytes)} and {human_bytes(vit.copy_bytes)}" + where_copied(mine),
        f"DDP: {len(resnet.drift_prone)} of ResNet-50's weights change strides where it matters "
        f"and {len(resnet.harmless)} only in size-1 dims: convert before wrapping.",
        f"Your model: {sum(len(v) for v in mine.findings().values())} findings "
        f"({', '.join(k for k, v in mine.findings().items() if v) or 'none'}); "
        f"{len(kept)} of {len(fixes)} fixes kept"
        + "".join(f"; not kept: {r.title}" + (f" ({r.outcome})" if r.outcome else "")
                  for r in fixes if not r.kept) + ".",
    ]
