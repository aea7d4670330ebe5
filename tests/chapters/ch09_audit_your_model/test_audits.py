"""What left chapter 09's notebook (audits.py): the set-up, the audit tables and the recorded
summaries they read. The keys and payload shapes are the H200 record's, so a CPU run still
shows the reference GPU's audits beside its own."""

import pytest
import torch

from labkit.audit import audit, report
from labkit.chapters.ch09_audit_your_model import audits
from labkit.core import results
from labkit.session import Recorded

KEYS = ("audit_resnet50", "audit_mobilenetv3", "audit_vit")


def _small_report() -> audit.Report:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1),
                                audits.Apply(lambda x: x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)),
                                torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                                torch.nn.Linear(4, 2))
    return audit.run(model, torch.randn(2, 3, 8, 8), memory_format="contiguous", name="small",
                     export_paths=("trace",), recommend_rounds=1, recommend_rep_ms=5.0,
                     profile=False)


def test_the_setup_differs_by_machine_and_refuses_a_bad_batch():
    cpu, gpu = audits.setup(False, 2), audits.setup(True, 2)
    assert (cpu.image, cpu.export_paths, cpu.device) == (64, ("trace",), "cpu")
    assert gpu.image == 224 and "aoti" not in gpu.export_paths and "trace" in gpu.export_paths
    assert len(cpu.table().rows) == 3
    assert any("keep rule" in n and "2%" in n for n in cpu.table().notes)  # printed once, with the set-up
    with pytest.raises(ValueError, match="batch"):
        audits.setup(False, 0)
    with pytest.raises(ValueError, match="image"):
        audits.setup(False, 2, 0)
    with pytest.raises(KeyError, match="no network"):
        audits.run(cpu, "AlexNet")


def test_the_header_reads_the_sessions_image_size():
    """Review 2026-12-04i 08-09-99 item 11: the CPU page's header said 64x64 images while its
    sizes line said cnn_image 112; the set-up takes the session's size, and the header says it."""
    where = audits.setup(False, 2, 112)
    assert where.image == 112 and "batch 2, 112x112 images, on cpu" in where.table().title
    assert audits.setup(True, 64, 224).image == 224


@pytest.mark.parametrize("key", KEYS)
def test_the_reference_gpus_recorded_summaries_still_read(key):
    entry = (results.load("nvidia-h200") or {}).get("chapters", {}).get("09_audit_your_model", {}).get(key)
    if entry is None:
        pytest.skip(f"nothing recorded under {key} in results/nvidia-h200.json")
    shown = audits.readings(entry["payload"])
    assert shown["input"].endswith("channels_last")
    assert "convert to channels_last before the first conv" in shown
    assert shown["layout drops"].split()[0].isdigit()


def test_a_table_shows_this_run_beside_the_recorded_one_and_folds_the_report():
    result = _small_report()
    alone = audits.audit_table(result)
    assert alone.columns == ["reading", "here (cpu)"]
    assert dict(zip(alone.column("reading"), alone.column("here (cpu)"), strict=True))["hidden copies"].startswith("1")
    assert any(s.startswith("the full report") for s, _ in alone.folded)

    recorded = Recorded("09_audit_your_model", "audit_small", "nvidia-h200",
                        {**report.summary(result), "device": "cuda"}, "2026-12-01")
    beside = audits.audit_table(result, recorded)
    assert beside.columns[-1] == "reference GPU (recorded)"
    assert "recorded on nvidia-h200" in " ".join(beside.notes)
    nothing = audits.audit_table(result, Recorded("09_audit_your_model", "audit_small", "nvidia-h200"))
    assert set(nothing.column(nothing.columns[-1])) == {"-"}
    assert "nothing recorded" in " ".join(nothing.notes)


def test_apply_takes_a_function_and_the_drift_table_names_the_network_as_given():
    with pytest.raises(TypeError, match="function of a tensor"):
        audits.Apply(3)
    table = audits.drift_table(_small_report(), "Small")
    assert table.title.startswith("Small parameters")
    assert table.column("count")[0] == 1  # the 3x3 conv weight moves elements under channels_last


def test_show_records_the_summary_on_any_machine_and_adds_the_reference_only_off_a_gpu():
    from types import SimpleNamespace

    result, kept = _small_report(), {}
    reference = Recorded("09_audit_your_model", "audit_small", "nvidia-h200", report.summary(result))
    for on_gpu in (True, False):
        chapter = SimpleNamespace(on_gpu=on_gpu, record=kept.__setitem__, reference=lambda key: reference)
        shown = audits.show(chapter, result, "audit_small")
        assert kept["audit_small"] == report.summary(result)
        assert len(shown.columns) == (2 if on_gpu else 3)


def test_each_audit_says_where_its_own_seconds_went():
    """The total and its largest phase in the table (every phase in the folded full report)."""
    result = _small_report()
    shown = audits.readings(report.summary(result))["the audit's own time"]
    total, rest = shown.split(" s (most in ")
    assert float(total) == pytest.approx(result.seconds["total"], abs=0.05)
    name, most = rest.rstrip(" s)").split(", ")
    phases = {k: v for k, v in result.seconds.items() if k != "total"}
    assert name == max(phases, key=phases.get) and float(most) == pytest.approx(phases[name], abs=0.05)
    assert audits.own_time({"total": 6.3, "load": 0.3, "exports": 1.8, "modules": 2.0}) == "6.3 s (most in modules, 2.0 s)"
    assert audits.own_time({"total": 1.0}) == "1.0 s"
    assert all(f"{k} " in report.text(result) for k in phases), "every phase stays in the full report"
    older = {k: v for k, v in report.summary(result).items() if k != "seconds"}
    assert "the audit's own time" not in audits.readings(older)   # a record from before it


def _with_outcome(outcome: str):
    from types import SimpleNamespace

    from labkit.audit import recommend

    rec = recommend.Recommendation("convert to channels_last before the first conv",
                                   outcome == recommend.KEPT, "", ratio=1.0, ratio_q25=1.0,
                                   ratio_q75=1.0, outcome=outcome)
    return SimpleNamespace(recommendations=[rec])


def test_the_first_takeaways_lead_counts_the_decisions_it_reports():
    from labkit.audit import recommend

    same = [_with_outcome(recommend.KEPT)] * 3
    assert audits.fix_lead(same).startswith("One fix, the same answer for all 3 networks here (kept)")
    two = [_with_outcome(recommend.KEPT), _with_outcome(recommend.NOT_FASTER), _with_outcome(recommend.KEPT)]
    assert audits.fix_lead(two) == "One fix, two answers (kept, no measured gain):"
    three = [*two[:2], _with_outcome(recommend.NOISY)]
    assert audits.fix_lead(three).startswith("One fix, three answers")


def test_readings_show_the_wall_beside_device_time_the_decision_and_the_output_scale():
    summary = report.summary(_small_report())
    first = summary["recommendations"][0]
    host_bound = {**first, "kept": True, "outcome": "kept", "ratio": 0.77, "ratio_q25": 0.77, "ratio_q75": 0.77,
                  "clock": "device-busy time (kernel records): the run is host-bound",
                  "wall_ratio": 0.99, "wall_q25": 0.98, "wall_q75": 1.0, "wall_faster": False,
                  "wall_clock": "the harness's device clock (CUDA events)"}
    noisy = {**first, "kept": False, "outcome": "too noisy to call"}
    kept_noisy = {**first, "kept": True, "outcome": "kept", "noisy": True}
    assert audits.readings({**summary, "recommendations": [kept_noisy]})[first["title"]].startswith(
        "kept, noisy rounds")
    shown = audits.readings({**summary, "recommendations": [host_bound]})
    assert "the batch's own time 0.99x" in shown[first["title"]] and "no measured gain" in shown[first["title"]]
    assert audits.readings({**summary, "recommendations": [noisy]})[first["title"]].startswith(
        "not kept: too noisy to call")
    assert shown["channels_last against NCHW: numerics"].startswith("max |error|")
    moved = audits.readings(summary)["move the permute().contiguous(): hand these modules channels_last"]
    assert "same variant as above" in moved and "x, per-round" not in moved
    assert audits.readings(summary)["bytes copied in one forward"].endswith("KiB")
    older = {**summary, "recommendations": [{k: v for k, v in first.items()
                                              if k in ("title", "kept", "why", "ratio", "ratio_q25",
                                                       "ratio_q75", "clock")}]}
    assert "channels_last against NCHW: numerics" not in audits.readings(older)  # a record from before it


def test_every_column_names_its_model_precision_and_the_modules_its_findings_name():
    """Review 2026-12-03e items 6-8: the input row always says the dtype (and on a GPU the TF32
    state), each column says which network it audited, and a finding names its module's class
    ('1: Apply', not '1 (1)'; 'the model itself', not '((model))')."""
    summary = report.summary(_small_report())
    shown = audits.readings(summary)
    assert shown["model"] == "small" and shown["input"] == "(2, 3, 8, 8) float32 on cpu, contiguous"
    assert shown["hidden copies"] == "1 (1: Apply)"
    gpu = {**summary, "device": "cuda:0", "tf32": {"convolutions": True, "matmuls": False}}
    assert "float32, TF32 on for convolutions on cuda:0" in audits.readings(gpu)["input"]
    off = {**gpu, "tf32": {"convolutions": False, "matmuls": False}}
    assert "float32, TF32 off" in audits.readings(off)["input"]
    older = {k: v for k, v in gpu.items() if k not in ("tf32", "module_kinds")}
    older["findings"] = {**summary["findings"], "hidden copies": ["(model)"]}
    said = audits.readings(older)
    assert "float32; TF32 not recorded" in said["input"] and said["hidden copies"] == "1 (the model itself)"
    assert "float16" in audits.readings({**gpu, "dtype": "float16"})["input"]


def test_the_columns_differences_are_named_in_one_line():
    here = report.summary(_small_report())
    there = {**here, "model": "torchvision:vit_b_16", "input_shape": [64, 3, 224, 224],
             "device": "cuda", "tf32": {"convolutions": True, "matmuls": False}}
    said = audits.differences(here, there)
    assert said.startswith("The columns differ in network, image size, batch, device and precision: ")
    assert audits.differences(here, {**here, "device": "cuda"}).startswith("The columns differ in device and precision")
    assert audits.differences(here, here) == ""


def test_on_a_cpu_the_float16_audit_is_not_run_and_the_reason_is_said():
    from types import SimpleNamespace

    empty = Recorded("09_audit_your_model", audits.FP16_KEY, "nvidia-h200")
    chapter = SimpleNamespace(on_gpu=False, reference=lambda key: empty)
    shown = audits.fp16_table(chapter, audits.setup(False, 2))
    assert not shown.rows and any("Not run on a CPU" in n for n in shown.notes)
    assert any("No float16 audit recorded on the reference GPU yet" in n for n in shown.notes)
    summary = {**report.summary(_small_report()), "device": "cuda", "dtype": "float16"}
    recorded = Recorded("09_audit_your_model", audits.FP16_KEY, "nvidia-h200", summary, "2026-12-04")
    chapter = SimpleNamespace(on_gpu=False, reference=lambda key: recorded)
    shown = audits.fp16_table(chapter, audits.setup(False, 2))
    assert shown.columns == ["reading", "reference GPU (recorded)"]
    assert dict(shown.rows)["input"].startswith("(2, 3, 8, 8) float16 on cuda")


def test_a_measured_loss_is_called_slower_not_no_gain():
    from labkit.audit import recommend

    assert audits.fix_lead([_with_outcome(recommend.SLOWER), _with_outcome(recommend.KEPT)]) == (
        "One fix, two answers (slower, kept):")
    summary = report.summary(_small_report())
    first = {**summary["recommendations"][0], "kept": False, "outcome": recommend.SLOWER,
             "ratio": 1.48, "ratio_q25": 1.27, "ratio_q75": 1.51}
    assert audits.readings({**summary, "recommendations": [first]})[first["title"]].startswith(
        "not kept: slower (1.48x")


def test_the_copies_takeaway_names_the_module_your_model_copied_in():
    """Review 2026-12-04l 08-09-99 item 11c: 'the copy detector and forward hooks say which
    module' followed '0 B, 0 B and 0 B' on the H200 page, tied to no finding; it now names the
    learner's module and bytes, and says the general rule only where nothing was copied."""
    from types import SimpleNamespace

    from labkit.chapters.ch09_audit_your_model import audits

    row = SimpleNamespace(name="1", kind="Apply")
    mine = SimpleNamespace(copy_bytes=4 * 2**20, copies=[row, row])
    assert audits.where_copied(mine) == ("; in your model 4 MiB, which the copy detector and forward hooks charge to "
                                         f"{audits._module('1', {'1': 'Apply'})}.")
    assert "name its module" in audits.where_copied(SimpleNamespace(copy_bytes=0, copies=[]))


def test_the_float16_table_shows_the_batchnorm_fix_after_channels_last():
    """Review 2026-12-04n 08-09-99 item 2: a float16 audit of a model with BatchNorm times keeping
    them float32 (chapter 08's fp16 rung); the float16 table shows its decision below
    channels_last's, as recorded (here a CPU's float16 audit of a small model standing in for
    the GPU's ResNet-50)."""
    from types import SimpleNamespace

    from tests.audit import handmade

    result = audit.run(handmade.with_batchnorm(), handmade.example(), export_paths=(),
                       recommend_rounds=2, recommend_rep_ms=20.0, dtype="float16")
    summary = {**report.summary(result), "device": "cuda"}
    # a GPU's record counts the launches a batch of the model as audited and of the variant
    # (review 2026-12-05o 08-09-99 item 5); a CPU launches no kernels
    bn = "keep BatchNorm float32 (2 of them half)"
    assert [r["launches"] for r in summary["recommendations"] if r["title"] == bn] == [None]
    summary["recommendations"] = [{**r, "launches": [282, 176]} if r["title"] == bn else r
                                  for r in summary["recommendations"]]
    recorded = Recorded("09_audit_your_model", audits.FP16_KEY, "nvidia-h200", summary, "2026-12-04")
    chapter = SimpleNamespace(on_gpu=False, reference=lambda key: recorded)
    rows = dict(audits.fp16_table(chapter, audits.setup(False, 2)).rows)
    names = list(rows)
    assert names[-2:] == ["convert to channels_last before the first conv", bn]
    fix = next(r for r in result.recommendations if r.title == bn)
    assert rows[bn].startswith(("kept" if fix.kept else "not kept") + (": " + fix.outcome if not fix.kept else ""))
    assert f"{fix.ratio:.2f}x" in rows[bn] and rows[bn].endswith("; launches a batch 282 -> 176")
    assert "launches" not in rows[names[-2]]


def test_the_export_note_names_the_images_it_checks():
    """Review 2026-12-05t 09 item 8: the CPU page read 'on the batch's first 8 images' at batch 2."""
    from labkit.chapters.ch09_audit_your_model import audits

    assert audits._export_images(2) == "the whole batch (2 images)"
    assert audits._export_images(audits.EXPORT_BATCH + 8) == f"the batch's first {audits.EXPORT_BATCH} images"
