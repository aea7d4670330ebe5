"""The keep rule and the instability flag on the H200's recorded ladder (2026-12-03 12:00 UTC,
results/nvidia-h200.json, chapter 08_inference_ladder, key ladder), its figures copied below
so the test does not move when the record is re-made; the last test reads the live record.

Issue 40's fixes checked here: the base's re-time flags a step only when it moved more than
keep.BASE_MOVE as well as out of its IQR (the old rule flagged 7 of 8 kept steps, on moves as
small as 0.07%), and fp16 weights, kept at 0.94x wall, is kept on device time because the rung
is host-bound, which its row says.
"""

import pytest

from labkit.chapters.ch08_inference_ladder import explain, keep, ladder, tables
from labkit.core import results
from labkit.session import Recorded

# the record's rows, trimmed to what the keep rule, the flag and the replayed table read
RECORD_1200 = [
    {"name": "eager strict float32", "after": "", "images_per_s": 3155.3, "median_s": 0.020283,
     "iqr_s": 5.889e-06, "kept": True, "judged_by": "", "gain": None, "gain_spread": None,
     "device_gain": None, "device_spread": None, "idle_share": 0.0156, "kernels_per_batch": 208.0},
    {"name": "TF32", "after": "eager strict float32", "images_per_s": 6709.8, "median_s": 0.0095383,
     "iqr_s": 9.17e-06, "kept": True, "judged_by": "wall", "gain": 2.1271,
     "gain_spread": [2.1256, 2.1283], "device_gain": 2.1784, "device_spread": [2.1759, 2.182],
     "idle_share": 0.0391, "kernels_per_batch": 247.0,
     "here": {"eager strict float32": {"images_per_s": 3155.3, "idle_share": 0.0156}}},
    {"name": "cudnn.benchmark", "after": "TF32", "images_per_s": 6715.7, "median_s": 0.0095299,
     "iqr_s": 2.208e-06, "kept": True, "judged_by": "wall", "gain": 1.0004,
     "gain_spread": [1.0001, 1.0006], "device_gain": 0.9998, "device_spread": [0.9991, 1.0006],
     "idle_share": 0.0381, "kernels_per_batch": 247.0,
     "here": {"TF32": {"images_per_s": 6712.5, "idle_share": 0.0387}}},
    {"name": "channels_last", "after": "cudnn.benchmark", "images_per_s": 8030.1,
     "median_s": 0.0079701, "iqr_s": 1.08e-05, "kept": True, "judged_by": "wall", "gain": 1.195,
     "gain_spread": [1.1942, 1.1955], "device_gain": 1.1948, "device_spread": [1.1942, 1.1963],
     "idle_share": 0.0374, "kernels_per_batch": 179.0,
     "here": {"cudnn.benchmark": {"images_per_s": 6720.6, "idle_share": 0.0374}}},
    {"name": "fp16 weights", "after": "channels_last", "images_per_s": 7468.3, "median_s": 0.0085695,
     "iqr_s": 0.000666, "kept": True, "judged_by": "device time", "gain": 0.9372,
     "gain_spread": [0.8824, 0.9484], "device_gain": 1.8336, "device_spread": [1.8298, 1.8359],
     "idle_share": 0.5117, "kernels_per_batch": 282.0,
     "here": {"channels_last": {"images_per_s": 8006.2, "idle_share": 0.0402}}},
    {"name": "Conv-BN folding", "after": "fp16 weights", "images_per_s": 13164.1,
     "median_s": 0.0048617, "iqr_s": 7.398e-06, "kept": True, "judged_by": "wall", "gain": 1.2275,
     "gain_spread": [1.1698, 1.3328], "device_gain": 0.9017, "device_spread": [0.9, 0.905],
     "idle_share": 0.0455, "kernels_per_batch": 176.0,
     "here": {"fp16 weights": {"images_per_s": 10735.8, "idle_share": 0.2981}}},
    {"name": "torch.compile", "after": "Conv-BN folding", "images_per_s": 19722.3,
     "median_s": 0.0032451, "iqr_s": 0.0008898, "kept": True, "judged_by": "wall", "gain": 1.5058,
     "gain_spread": [1.4006, 1.8563], "device_gain": 1.9948, "device_spread": [1.9874, 1.9973],
     "idle_share": 0.2831, "kernels_per_batch": 106.0,
     "here": {"Conv-BN folding": {"images_per_s": 13126.5, "idle_share": 0.0483}}},
    {"name": "CUDA Graphs", "after": "torch.compile", "images_per_s": 26801.4, "median_s": 0.0023879,
     "iqr_s": 6.73e-06, "kept": True, "judged_by": "wall", "gain": 1.0767,
     "gain_spread": [1.0754, 1.0784], "device_gain": 1.0036, "device_spread": [1.002, 1.0062],
     "idle_share": 0.0293, "kernels_per_batch": 106.0,
     "here": {"torch.compile": {"images_per_s": 24894.1, "idle_share": 0.0952}}},
    {"name": "batch 256", "after": "CUDA Graphs", "images_per_s": 31778.6, "median_s": 0.0080557,
     "iqr_s": 2.895e-05, "kept": True, "judged_by": "wall", "gain": 1.1883,
     "gain_spread": [1.1853, 1.1895], "device_gain": 1.1667, "device_spread": [1.1646, 1.1687],
     "idle_share": 0.0135, "kernels_per_batch": 106.0,
     "here": {"CUDA Graphs": {"images_per_s": 26734.5, "idle_share": 0.0317}}},
]
BY_NAME = {r["name"]: r for r in RECORD_1200}


def flags(rows):
    by_name = {r["name"]: r for r in rows}
    return {r["name"]: tables.recorded_unstable(r, by_name[r["after"]]) for r in rows if r["after"]}


def decided(r, base):
    """keep.decide on a recorded row's own fields, as Ladder.step called it: on its last timing
    (a re-time when its base moved), or keep.over_moved_base when the base moved in every one."""
    timings = r.get("timings") or []
    if timings and timings[-1].get("base_moved"):
        return keep.over_moved_base(base["images_per_s"], base.get("idle_share"),
                                    [{**t, "gain": tuple(t["gain"])} for t in timings], r["device_gain"],
                                    tuple(r["device_spread"]) if r["device_spread"] else None,
                                    base["iqr_s"] / base["median_s"] if base.get("median_s") else None)
    idles = ((timings[-1]["base_idle"], timings[-1]["idle"]) if timings else
             (r["here"][base["name"]]["idle_share"], r["idle_share"]))
    return keep.decide(True, "", r["gain"], tuple(r["gain_spread"]), r["device_gain"],
                       tuple(r["device_spread"]) if r["device_spread"] else None, *idles)


def test_the_unstable_flag_keeps_the_host_bound_middle_and_drops_a_tight_iqrs_hair():
    said = flags(RECORD_1200)
    assert {name for name, flag in said.items() if flag} == {"Conv-BN folding", "torch.compile",
                                                             "CUDA Graphs"}
    # folding's base (fp16 weights, 7,468 images/s in its own step) re-timed at 10,736
    assert "base re-timed +44% off its median 7,468 (IQR 7,178-7,759)" in said["Conv-BN folding"]
    assert said["torch.compile"] == "IQR 27% > 10%"
    assert "+26% off its median 19,722" in said["CUDA Graphs"]
    # channels_last's base: TF32-era cudnn.benchmark, IQR 6,715-6,716, re-timed 0.07% away
    base, r = BY_NAME["cudnn.benchmark"], BY_NAME["channels_last"]
    half_iqr = base["images_per_s"] * base["iqr_s"] / base["median_s"] / 2
    re_timed = r["here"]["cudnn.benchmark"]["images_per_s"]
    assert re_timed > base["images_per_s"] + half_iqr                     # outside its IQR,
    assert abs(re_timed / base["images_per_s"] - 1) < keep.BASE_MOVE      # within the band:
    assert said["channels_last"] == ""                                    # not flagged
    # the same move with a wider band of its own would flag: the band is BASE_MOVE, not zero
    assert keep.unstable(0.0, 6715.7, 0.0002, 6715.7 * (1 + 2 * keep.BASE_MOVE))
    assert not keep.unstable(0.0, 6715.7, 0.0002, 6715.7 * (1 + keep.BASE_MOVE / 2))
    rule = keep.unstable_rule()
    assert "10%" in rule and f"over {100 * keep.BASE_MOVE:.0f}% off its median" in rule


def test_fp16_weights_is_kept_on_device_time_because_the_rung_is_host_bound_and_says_so():
    r, base = BY_NAME["fp16 weights"], BY_NAME["channels_last"]
    d = decided(r, base)
    # the rule read the wall spread (wholly below 1), the device-time spread (wholly above 1)
    # and the unprofiled idle (4% -> 51%): host-bound, kept on device time, a trade
    assert keep.below(tuple(r["gain_spread"])) and keep.above(tuple(r["device_spread"]))
    assert d.kept and d.judged_by == "device time" and d.gain == pytest.approx(1.8336)
    assert "host-bound (GPU idle up to 51% > 30%)" in d.why and "slower on the wall" in d.why
    # the same figures on a device-bound rung (idle 4% both sides) would drop it on the wall
    assert not keep.decide(True, "", r["gain"], tuple(r["gain_spread"]), r["device_gain"],
                           tuple(r["device_spread"]), 0.04, 0.04).kept
    # the replayed row says which clock kept it, next to its 0.94x wall gain
    shown = tables.recorded_ladder(Recorded("08_inference_ladder", "ladder", "nvidia-h200",
                                            {"rungs": [dict(r, math="-", compile_s=0.0) for r in RECORD_1200]},
                                            "2026-12-03"), fresh=None)
    row = shown.rows[[x[0] for x in shown.rows].index("fp16 weights")]
    # (the device-time gain beside the wall's since review 2026-12-04j item 8)
    assert row[2].startswith("0.94x") and row[3] == "1.83x"
    assert row[5] == "kept on device time 1.83x (host-bound, GPU idle 51%)"
    assert shown.rows[[x[0] for x in shown.rows].index("channels_last")][5] == "kept"


def test_the_fp16_reading_names_the_wall_loss_and_the_extra_kernels():
    def as_rung(r):
        rung = ladder.Rung(r["name"], ladder.Settings(batch=64), r["images_per_s"], r["median_s"],
                           r["iqr_s"], 0.0, None, after=r["after"], idle_share=r["idle_share"],
                           kernels_per_batch=r["kernels_per_batch"], here=r.get("here", {}),
                           device_s=1e-3)
        rung.gain, rung.gain_spread = r["gain"], tuple(r["gain_spread"] or (1, 1))
        rung.device_gain, rung.device_spread = r["device_gain"], tuple(r["device_spread"] or (1, 1))
        return rung
    said = explain.reading(as_rung(BY_NAME["channels_last"]), as_rung(BY_NAME["fp16 weights"]))
    assert "the wall lost" in said and "kernels per batch 179 -> 282" in said
    assert "the host now binds the rung (idle 51% > 30%)" in said


def test_the_live_records_decisions_follow_from_its_own_fields():
    """Whatever record is current: each step's kept / judged_by is what keep.decide gives on the
    fields the record stores, so the table's clocks are the ones the rule read."""
    entry = ((results.load("nvidia-h200") or {}).get("chapters", {}).get("08_inference_ladder", {})
             .get("ladder"))
    if entry is None:
        pytest.skip("nothing recorded under 08_inference_ladder/ladder in results/nvidia-h200.json")
    rows = entry["payload"]["rungs"]
    by_name = {r["name"]: r for r in rows}
    checked = 0
    for r in rows:
        if not r.get("after") or r.get("error") or (r.get("gate") or {}).get("passed") is False:
            continue
        d = decided(r, by_name[r["after"]])
        assert (d.kept, d.judged_by) == (r["kept"], r["judged_by"]), r["name"]
        checked += 1
    assert checked >= 5
