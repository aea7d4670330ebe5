"""Review 2026-12-04i items 1 and 4 on the recorded files: the H200 page's fp16 weights (1.15x,
its base 4% idle) and CUDA Graphs (1.86x, its base 48% idle) lie outside the three fresh runs
of reproduce.py 08 at 03:31 (1.44-1.53x and 1.18-1.29x); the record is read by its recorded_at
against the page's (03:26); Graphs' wall gain follows 1/(1 - its base's idle); and 'Do the steps
simply add up?' is decided on device time where the wall's fp16 gain is unstable.

data/h200_2026-12-04.json holds copies of results/reproduce/nvidia-h200-08_inference_ladder.json
(steps only) and results/nvidia-h200.json's 08 ladder as the review read them, so these tests
keep reading those records after the next re-recording overwrites the live ones."""

import json
from pathlib import Path

import pytest

from labkit.chapters.ch08_inference_ladder import reproduce, tables
from labkit.session import Recorded

DATA = json.loads((Path(__file__).parent / "data" / "h200_2026-12-04.json").read_text())


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    (tmp_path / "reproduce").mkdir()
    (tmp_path / "reproduce" / "nvidia-h200-08_inference_ladder.json").write_text(json.dumps(DATA["reproduce"]))
    (tmp_path / "nvidia-h200.json").write_text(json.dumps(DATA["results"]))
    monkeypatch.setenv("LABKIT_RESULTS_DIR", str(tmp_path))
    entry = DATA["results"]["chapters"]["08_inference_ladder"]["ladder"]
    return Recorded("08_inference_ladder", "ladder", "nvidia-h200", entry["payload"], entry["recorded_at"][:10])


def _page_gains(rec):
    return {r["name"]: r.get("gain") for r in rec["rungs"]}


def test_a_page_gain_outside_the_fresh_range_is_not_held(recorded):
    found = reproduce.fresh_runs("nvidia-h200")
    gains = _page_gains(recorded)
    # the runs agree among themselves on Graphs (1.18-1.29x): the old rule held it
    assert reproduce.holds(found["steps"]["CUDA Graphs"])
    loose = {n for n, s in found["steps"].items() if not reproduce.holds(s, gains.get(n))}
    assert loose == {"fp16 weights", "CUDA Graphs"}
    # within 2% of the range still holds (torch.compile 1.648x beside 1.659-1.716x)
    assert reproduce.inside(found["steps"]["torch.compile"], gains["torch.compile"])


def test_the_recorded_ladder_marks_both_and_reads_the_record_by_its_time(recorded):
    text = str(tables.recorded_ladder(recorded))
    rows = {line.split("  ")[0]: line for line in text.splitlines()}
    assert "(not held by the fresh runs)" in rows["CUDA Graphs"] and "(not held" in rows["fp16 weights"]
    assert "not held" not in rows["torch.compile"] and "not held" not in rows["TF32"]
    assert ("Not held by 3 fresh runs on nvidia-h200 (reproduce.py, 2026-12-04 03:31 UTC, "
            "after this page's run at 03:26; held: within 10% of each other, no run's instability "
            "flag able to flip its keep decision, this page's among them)") in text
    # review 2026-12-04j item 7: how often each was kept, and which side of the runs the page is
    assert "CUDA Graphs kept 3 of 3, this page's 1.86x above all 3: 1.18-1.29x wall, 1.00x device" in text
    assert "fp16 weights kept 3 of 3, this page's 1.15x below all 3: 1.44-1.53x wall" in text
    # item 8: the recorded ladder (the CPU page's view) has the device-time gain beside the wall's
    assert "step gain: device time" in text.splitlines()[1]
    assert "1.00x" in rows["CUDA Graphs"].split("]")[1].split()[0]


def test_graphs_wall_gain_follows_its_bases_idle(recorded):
    text = str(tables.recorded_ladder(recorded))
    line = next(line for line in text.splitlines() if line.startswith("CUDA Graphs only removes host work"))
    # 1/(1 - 0.478) on the page; the fresh runs' base (fp16 weights) idled 19.9-25.1%
    assert "48% here, 1.91x (measured 1.86x)" in line
    assert "20-25% in the fresh runs" in line and "1.25-1.34x (measured 1.18-1.29x)" in line


def test_the_label_says_when_the_record_predates_the_page():
    found = {"runs": 3, "machine": "nvidia-h200", "recorded_at": "2026-12-03T22:09:27+00:00", "steps": {}}
    assert "before this page's run at 03:26" in reproduce.label(found, "2026-12-04T03:26:14+00:00")


def test_the_steps_add_up_question_is_decided_on_device_time(recorded):
    text = str(tables.recorded_ladder(recorded))
    line = next(line for line in text.splitlines() if line.startswith("Do the steps simply add up?"))
    assert "Not decided on the wall clock (fp16 weights unstable on the climb)" in line
    assert "on device time the three multiply to 1.69x alone" in line and "2.54x on the climb" in line
    assert "they do not (1.50x apart)" in line and "fp16 weights 1.85x after channels_last, 1.37x alone" in line


def test_channels_last_names_the_layout_kernels_it_removed():
    """Item 10: TF32 added cuDNN's NCHW <-> NHWC transposes (67 per batch) that channels_last
    removes; the reading names them from the profile, not 'the device's work shrank' alone."""
    from labkit.chapters.ch08_inference_ladder import explain, ladder

    rungs = {r["name"]: ladder.rung_from_dict(r)
             for r in DATA["results"]["chapters"]["08_inference_ladder"]["ladder"]["payload"]["rungs"]}
    said = explain.copies_removed(rungs["cudnn.benchmark"], rungs["channels_last"])
    assert said == "copies/layout kernels per batch 67 -> 0 (-43 nchwToNhwcKernel, -24 nhwcToNchwKernel)"
    assert explain.copies_removed(rungs["TF32"], rungs["cudnn.benchmark"]) == ""   # none removed
    # the reading (review 2026-12-04j item 1): the class whose ms moved most, then the kernels
    read = explain.reading(rungs["cudnn.benchmark"], rungs["channels_last"])
    assert "copies/layout 1.20 -> 0.03 ms (-1.17)" in read and "-43 nchwToNhwcKernel" in read
    # TF32 added the transposes channels_last then removes: its reading names them
    read = explain.reading(rungs["eager strict float32"], rungs["TF32"])
    assert "copies/layout +1.19" in read and "+43 nchwToNhwcKernel" in read


def test_the_keep_rules_mechanics_are_folded_under_the_gate_table():
    shown = tables.gate_rules()
    (summary, text), = shown.folded
    assert summary == "how the gate and the keep rule work, what 'unstable' means"
    assert "A step is flagged unstable: IQR over 10% of the median" in text
    assert "at least 1.02x" in text and "over 30% the host binds the rung" in text


def _h200_rungs():
    from labkit.chapters.ch08_inference_ladder import ladder

    return {r["name"]: ladder.rung_from_dict(r)
            for r in DATA["results"]["chapters"]["08_inference_ladder"]["ladder"]["payload"]["rungs"]}


def test_the_compile_reading_follows_its_own_profile():
    """Review 2026-12-04j item 1: torch.compile's reading named 53 copy kernels (0.12 ms) where
    its profile shows eager BatchNorm's kernels going (reductions/norms -1.5 ms) and the Triton
    tails growing; the reading names the class with the largest |delta ms|, its sign, the other
    way's largest move, and the kernels removed and added."""
    from labkit.chapters.ch08_inference_ladder import explain

    rungs = _h200_rungs()
    read = explain.reading(rungs["CUDA Graphs"], rungs["torch.compile"])
    shift = explain.class_shift(rungs["CUDA Graphs"], rungs["torch.compile"])
    assert shift.startswith("reductions/norms 1.5") and "(-1.4" in shift
    assert shift in read and "-53 batch_norm_transform_input_channels_last_kernel" in read
    assert "+" in read.split("kernels ")[1] and "triton_poi_fused" in read
    # a step whose classes barely moved names none
    assert explain.class_shift(rungs["TF32"], rungs["cudnn.benchmark"]) == ""


def test_the_plan_does_not_say_inductor_fuses_into_cudnns_convolutions():
    from labkit.chapters.ch08_inference_ladder import ladder

    why = next(s.why for s in ladder.GPU_STEPS if s.name == "torch.compile")
    assert "BatchNorm" in why and "fuses the elementwise work around" not in why


def test_a_rung_at_the_host_bound_border_says_so_with_both_clocks():
    """Review 2026-12-04j item 2, as review 2026-12-04l item 4 restated it: a rung the host binds
    reads its host time as about the wall's, its launches at its own rounds' pace one part of
    it; 'at the border, either clock' only within 5 points of the 30% idle line; a graph launch
    has no host sum."""
    import dataclasses

    from labkit.chapters.ch08_inference_ladder import explain

    rungs = _h200_rungs()
    fp16 = rungs["fp16 weights"]
    said = explain.border(fp16)
    assert said.startswith("host ~ wall ") and said.endswith("ms of it")
    assert explain.border(rungs["CUDA Graphs"]) == ""     # one graph launch: no host sum
    near = dataclasses.replace(fp16, idle_share=0.32, timings=[])
    assert explain.border(near).endswith(": at the border, either clock")
    far = dataclasses.replace(fp16, idle_share=0.10, timings=[])
    assert not explain.border(far).endswith("either clock") and explain.shown_border(far) == ""
    assert explain.shown_border(near) == explain.border(near)


def test_the_past_defaults_section_names_one_best_rung_and_no_pointer_to_itself():
    """Review 2026-12-04j item 3: the section printed "'Past the defaults' times removing it"
    inside Past the defaults, and two rungs read as best; one best rung is named with the rule
    that picked it, and only the chapter's core points to the optional section."""
    import pytest

    from labkit.chapters.ch08_inference_ladder import past_view

    shown = past_view.section()
    if isinstance(shown, str):
        pytest.skip("no recorded Past the defaults run")
    text = shown._repr_html_()
    assert "Past the defaults' times" not in text and "the optional section times" not in text
    assert "the fastest rung the gate passed, by images/s in its own call" in text
