"""The ladder's core table reads on its own (review 2026-12-03f items 1, 2 and 9): the step gain
divides out of a base shown beside it, a not-decidable row says why in its cell, and one line
names the gate's closest call, computed from the rungs' own gates.

The figures are the H200 notebook copy's that test_base_moved.py quotes (fp16 weights 12,985
images/s in its own step, re-timed at 6,636 as Conv-BN folding's base, folding 11,215 at 1.68x).
"""

import re

from labkit.chapters.ch08_inference_ladder import keep, ladder, numerics, report

PASSED = numerics.Gate("float16", 1e-3, 0.015, 1.0, 64, True)


def _rung(name, images_per_s, after="", gate=PASSED, **kw):
    median_s = 64 / images_per_s
    return ladder.Rung(name, ladder.Settings(batch=64), images_per_s, median_s, 0.02 * median_s,
                       0.0, None, after=after, gate=gate, **kw)


def _climb():
    strict = _rung("eager strict float32", 3160.0)
    fp16 = _rung("fp16 weights", 12985.0, after=strict.name, kept=True, why="kept: 4.1x",
                 gain=4.11, gain_spread=(4.0, 4.2),
                 here={strict.name: {"images_per_s": 3160.0, "idle_share": None}})
    timings = [{"base_images_per_s": b} for b in (6636.0, 6701.0, 6701.0)]
    folding = _rung("Conv-BN folding", 11215.0, after=fp16.name, kept=False,
                    judged_by=keep.NOT_DECIDABLE, why="not decidable: base moved in 3 of 3 timings",
                    gain=1.68, gain_spread=(1.67, 1.71), timings=timings,
                    here={fp16.name: {"images_per_s": 6636.0, "idle_share": 0.58,
                                      "step_images_per_s": 11140.0},
                          strict.name: {"images_per_s": 3100.0}})
    return [strict, fp16, folding], strict


def _core_rows(shown: report.LadderTable) -> tuple[list[str], list[list[str]]]:
    core = shown._repr_html_().split("<details>")[0]
    head = re.findall(r"<th>(.*?)</th>", core)
    rows = [re.findall(r"<td>(.*?)</td>", tr) for tr in re.findall(r"<tr style=.*?</tr>", core)]
    return head, rows


def test_the_core_shows_the_base_each_step_gain_divides_out_of():
    rungs, strict = _climb()
    head, rows = _core_rows(report.table(rungs, strict, strict))
    base_col = head.index("step&#x27;s base, images/s")
    speed, gain = head.index("images/s"), head.index("step gain: wall")
    assert [r[base_col] for r in rows] == ["", "3,160", "6,636 (re-timed; rung 11,140)"]
    # a room divides what it sees: the rung's images/s (in the deciding timing, where re-timed)
    # over the base shown is the step gain, within 2%, where over the row above
    # (11,215 / 12,985 = 0.86x) it is not
    for r in rows[1:]:
        base, *then = (float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*\d", r[base_col]))
        ratio = (then[0] if then else float(r[speed].replace(",", ""))) / base
        assert abs(ratio / float(r[gain].split("x")[0]) - 1) < 0.02, (r, ratio)


def test_a_not_decidable_row_says_why_in_its_core_cell():
    rungs, strict = _climb()
    assert report.decided(rungs[2]) == "not decidable: base moved 3/3"
    _, rows = _core_rows(report.table(rungs, strict, strict))
    assert rows[2][1] == "not decidable: base moved 3/3" and rows[1][1] == "kept"
    # one timing, not re-timed (out of budget): 1/1
    once = _rung("x", 100.0, after="y", judged_by=keep.NOT_DECIDABLE, why="not decidable: ...")
    assert report.decided(once) == "not decidable: base moved 1/1"


def test_the_gate_line_names_the_largest_error_against_its_tolerance_not_the_largest_error():
    rungs, strict = _climb()
    rungs[1].gate = numerics.Gate("bfloat16", 3.2e-2, 0.12, 1.0, 64, True)   # 27% of its tolerance
    rungs[2].gate = numerics.Gate("tf32", 5e-3, 0.01, 1.0, 64, True)         # 50%: the closest
    said = report.gate_line(rungs)
    assert said == ("Numerics gate: 3 of 3 rungs inside; largest error against its "
                    "tolerance: Conv-BN folding 5.0e-03 of 0.01 (50%).")
    # the centred error counts where it is nearer its own tolerance; a refused rung is counted out
    rungs[0].gate = numerics.Gate("float32", 1e-6, 1e-4, 1.0, 64, True, centred_error=9e-4,
                                  centred_tolerance=1e-3)
    rungs[1].gate = numerics.Gate("bfloat16", 0.5, 0.12, 1.0, 64, True)
    said = report.gate_line(rungs)
    assert said.startswith("Numerics gate: 2 of 3 rungs inside;")
    assert "fp16 weights 5.0e-01 of 0.12 (417%)" in said
    rungs[1].gate = PASSED
    assert "eager strict float32 (centred) 9.0e-04 of 0.001 (90%)" in report.gate_line(rungs)
    # shown unfolded, under the core table; nothing gated, nothing said
    shown = report.table(rungs, strict, strict)._repr_html_()
    assert "Numerics gate:" in shown.split("<details>")[0]
    for r in rungs:
        r.gate = None
    assert report.gate_line(rungs) == ""


def test_a_row_re_timed_over_the_start_shows_its_images_from_the_rounds_of_its_ratio():
    """Review 2026-12-04i item 5, with the committed CPU copy's numbers: the start (PyTorch's
    defaults, 2 threads) at 98 images/s; Conv-BN folding first timed at 88 in slow rounds,
    re-timed alone at 109 over a base of 97, 1.07x over the start read from that re-time. The
    page printed 88 beside 1.07x (a slower rung read as faster) under 'over strict float32'."""
    start = _rung("PyTorch defaults (2 threads)", 98.0)
    folding = _rung("Conv-BN folding", 88.0, after=start.name, kept=True, why="kept: 1.10x wall",
                    gain=1.10, gain_spread=(1.09, 1.13), over={start.name: (1.07, 1.07, 1.10)},
                    timings=[{"base_images_per_s": 83.0}, {"base_images_per_s": 97.0}],
                    here={start.name: {"images_per_s": 97.0, "idle_share": None,
                                       "step_images_per_s": 109.0}})
    head, rows = _core_rows(report.table([start, folding], start, start))
    over = head.index("over PyTorch defaults (2 threads)")   # named after the start row
    assert "over strict float32" not in head
    cell = rows[1][head.index("images/s")]
    assert cell == "109 (first timed: 88)"
    shown = float(cell.split(" ")[0].replace(",", ""))
    ratio = float(rows[1][over].split("x")[0])
    assert ratio > 1 and shown > 98          # faster, and its images/s say so
    assert abs(shown / ratio / 98 - 1) < 0.05  # the start row's images/s times the ratio


def test_a_row_timed_once_keeps_its_own_images():
    rungs, strict = _climb()
    head, rows = _core_rows(report.table(rungs, strict, strict))
    assert [r[head.index("images/s")] for r in rows] == ["3,160", "12,985", "11,215"]
    assert "over eager strict float32" in head
