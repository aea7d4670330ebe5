"""Each step's explanation, written from the two rungs' own measurements, never from the step's name.

A sentence about a step may say only what the numbers beside it show: the wall gain and the
device-time gain with their ranges, the GPU's idle share before and after (from unprofiled
timing), the kernels launched per batch and the kernel classes' shares of device time (from
the profile). The reading picks among a few cases by those numbers:

- the wall clock gained and the device did not: the gain is the host's (less host work per
  batch); with the kernel count unchanged it is not fewer launches but cheaper ones, with
  fewer kernels it is fewer launches;
- the device gained and the wall did not: the device's work shrank while the host set the pace;
  when the wall lost, the host did more per batch (and the kernel count says if it launched more);
- both gained: 'both clocks gained';
- the idle share crossing the host-bound threshold either way is said, with both figures.

Then what the profile shows (review 2026-12-04j item 1: torch.compile's reading named 0.12 ms of
copies where eager BatchNorm's 1.5 ms went): the kernel class whose device ms per batch moved
most, with its sign, and the largest move the other way (`class_shift`); the kernels removed and
added by name (`kernels_moved`, or one kernel become several: `kernel_jump`); and, for an eager
rung the host binds, the host's time as about the wall's with the launches' part of it, 'at the
border, either clock' only within 5 points of the 30% idle line (`border`, review 2026-12-04l
item 4).

A step whose base moved in every timing (keep.NOT_DECIDABLE) gets no wall reading: its gain is
a ratio over a base the host ran at another pace, so any reading would explain the host, not the
step (review 2026-12-03e item 1: folding's "fewer launch calls" on a base timed 49% slow). Its
figures are shown with the host's pace in its rounds beside its base's, and where a device clock
exists it is read by that alone (`device_reading`); a flagged (unstable) step's reading says it
is flagged.
"""

from __future__ import annotations

import re

from labkit.chapters.ch08_inference_ladder import keep, ladder
from labkit.core import results
from labkit.measure import timeline_stats
from labkit.measure.device_time import BORDER_POINTS, at_border

CLASS_MOVE = 0.05   # a kernel class's share moving by more than this is named
# A reading calls a clock faster or slower only when its range excludes 1 (the keep rule's
# test) and its median is more than this away from 1: kernel records resolve a 0.5% change
# between batches, which is measured but says nothing about where a step's gain came from.
MATERIAL = keep.MIN_GAIN  # the keep rule's minimum gain: a reading and a decision draw one line
# A rise in kernels per batch over this share is named in the reading itself, with what was
# added and removed (review 2026-12-03h item 5: eager fp16 went 182 -> 282 on the H200, each
# of BatchNorm's 53 cuDNN kernels becoming three native ones, and its reading said only "the
# device's work shrank and the wall followed").
KERNEL_JUMP = 0.20
# GPU idle rising by more than this (a share of the wall time) is named even below the
# host-bound threshold: that fp16 step's idle went 4% -> 21% with the extra launches.
IDLE_RISE = 0.10
# the wall following the device "part way": its gain under this share of the device's
PART_WAY = 0.90
# what a kernel's name says least: namespaces, types and the elementwise wrappers whose
# template argument names the real operation
_NOISE = frozenset({"void", "at", "native", "cudnn", "anonymous", "namespace", "c10", "Half",
                    "BFloat16", "float", "double", "int", "long", "bool", "true", "false", "std",
                    "unsigned", "char", "detail", "cuda"})
_WRAPPERS = frozenset({"vectorized_elementwise_kernel", "unrolled_elementwise_kernel",
                       "elementwise_kernel", "distribution_elementwise_grid_stride_kernel"})
_SHORT = 48


def short_name(name: str) -> str:
    """A kernel's name as a reading can print it: the first identifier that names an operation
    ('batch_norm_transform_input_channels_last_kernel', 'bn_fw_inf_1C11_kernel_NHWC',
    'direct_copy_kernel_cuda' out of an elementwise wrapper), else the wrapper with the last
    word the recorded (cut) name kept ('vectorized_elementwise_kernel<batch...>')."""
    words = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", name) if w not in _NOISE]
    named = [w for w in words if "_" in w and w not in _WRAPPERS and not w.startswith("launch_")]
    if named:
        word = named[0]
    elif words and words[0] in _WRAPPERS:
        word = words[0] + (f"<{words[-1]}...>" if len(words) > 1 else "")
    else:
        word = words[0] if words else name
    return word if len(word) <= _SHORT else word[:_SHORT - 3] + "..."


def kernel_jump(before: ladder.Rung, after: ladder.Rung) -> str:
    """A rise in kernels per batch over KERNEL_JUMP in words, from the two profiles: 'kernels per
    batch 182 -> 282: each of the 53 bn_fw_inf_1C11_kernel_NHWC became 3
    (direct_copy_kernel_cuda, ...)'; when the added and removed kernels do not pair up that way,
    the names added and removed most; '' when the count did not rise that much."""
    k0, k1 = before.kernels_per_batch, after.kernels_per_batch
    if k0 is None or k1 is None or k1 <= (1 + KERNEL_JUMP) * k0:
        return ""
    said = f"kernels per batch {k0:.0f} -> {k1:.0f}"
    n0, n1 = before.kernel_names or {}, after.kernel_names or {}
    if not n0 or not n1:
        return said
    # by short name: the same operation in another vector width or dtype
    # (vectorized_elementwise_kernel<4, ...> -> <8, ...> in fp16) is not a kernel added
    moves: dict[str, float] = {}
    for names, sign in ((n1, 1.0), (n0, -1.0)):
        for n, count in names.items():
            moves[short_name(n)] = moves.get(short_name(n), 0.0) + sign * count
    added = sorted(((d, n) for n, d in moves.items() if d >= 1), key=lambda m: -m[0])
    removed = sorted(((d, n) for n, d in moves.items() if d <= -1), key=lambda m: m[0])
    # one kernel replaced by several, each launched as often as it was: the kernel removed that
    # as many added kernels match (the others that moved, a GEMM's tiles, say, are left out)
    pairs = [(-d, n, [a for da, a in added if abs(da + d) < 0.5]) for d, n in removed]
    gone, name, each = max(pairs, key=lambda p: len(p[2]), default=(0.0, "", []))
    if len(each) >= 2:
        return said + f": each of the {gone:.0f} {name} became {len(each)} ({', '.join(each)})"
    return (said + " (" + ", ".join(f"+{d:.0f} {n}" for d, n in added[:3])
            + "".join(f", {d:.0f} {n}" for d, n in removed[:2]) + ")")


COPIES_DROP = 5   # copy/layout kernels per batch a step must remove to have them named


def kernel_word(name: str) -> str:
    """The kernel's own identifier: the one just before its template arguments
    ('nchwToNhwcKernel' out of 'void cudnn::engines_precompiled::nchwToNhwcKernel<float, ...'),
    else short_name's."""
    found = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*<", name)
    return found.group(1) if found and found.group(1) not in _WRAPPERS else short_name(name)


def copies_removed(before: ladder.Rung, after: ladder.Rung) -> str:
    """The copy and layout kernels a step removed, named from the two profiles: 'copies/layout
    kernels per batch 67 -> 0 (-43 nchwToNhwcKernel, -24 nhwcToNchwKernel)'; '' when the class
    fell by fewer than COPIES_DROP. Why: channels_last's 1.21x on the H200 is cuDNN's NCHW <->
    NHWC transposes around each tensor-core convolution going away, which the reading said only
    as 'the device's work shrank' (review 2026-12-04i item 10)."""
    c0 = (before.kernel_counts or {}).get(timeline_stats.COPIES)
    c1 = (after.kernel_counts or {}).get(timeline_stats.COPIES, 0.0)
    if c0 is None or c0 - c1 < COPIES_DROP:
        return ""
    n0, n1 = before.kernel_names or {}, after.kernel_names or {}
    drops: dict[str, float] = {}
    for n, count in n0.items():
        if timeline_stats.kind_class(n, "kernel") == timeline_stats.COPIES and count - n1.get(n, 0.0) >= 1:
            word = kernel_word(n)
            drops[word] = drops.get(word, 0.0) + count - n1.get(n, 0.0)
    named = ", ".join(f"-{d:.0f} {n}" for n, d in sorted(drops.items(), key=lambda m: -m[1])[:3])
    return f"copies/layout kernels per batch {c0:.0f} -> {c1:.0f}" + (f" ({named})" if named else "")


# a kernel class's move in device ms (per batch of the base's size) named beside the largest
# when it went the other way and moved at least this much
COUNTER_MOVE_MS = 0.10
GEMM = "GEMM/conv"   # timeline_stats' class of matmul and convolution kernels


def class_ms(rung: ladder.Rung, batch: int | None = None) -> dict[str, float]:
    """Device milliseconds per `batch` images (the rung's own batch by default) by kernel
    class, from the rung's profile: its class shares times its device time; {} without a
    device clock or a profile."""
    if rung.device_s is None or not rung.kinds:
        return {}
    per_batch = 1e3 * rung.device_s * (batch or rung.settings.batch) / rung.settings.batch
    return {k: share * per_batch for k, share in rung.kinds.items()}


def class_shift(before: ladder.Rung, after: ladder.Rung) -> str:
    """The kernel class whose device ms moved most in a step, with its sign, and the largest
    move the other way where one reaches COUNTER_MOVE_MS: 'reductions/norms 1.54 -> 0.05 ms
    (-1.49), elementwise +0.18'; per batch of the base's size. Why: an explanation must follow
    from the rung's own profile (review 2026-12-04j item 1: torch.compile's reading named 0.12
    ms of copies while eager BatchNorm's 1.49 ms went and the elementwise tails grew). ''
    without both profiles on a device clock."""
    b = before.settings.batch
    m0, m1 = class_ms(before, b), class_ms(after, b)
    if not m0 or not m1:
        return ""
    moves = sorted(((m1.get(k, 0.0) - m0.get(k, 0.0), k) for k in set(m0) | set(m1)),
                   key=lambda m: -abs(m[0]))
    delta, name = moves[0]
    if abs(delta) < 0.5 * COUNTER_MOVE_MS:
        return ""
    said = f"{name} {m0.get(name, 0.0):.2f} -> {m1.get(name, 0.0):.2f} ms ({delta:+.2f})"
    other = next(((d, k) for d, k in moves[1:] if d * delta < 0 and abs(d) >= COUNTER_MOVE_MS), None)
    return said + (f", {other[1]} {other[0]:+.2f}" if other else "")


def _kernel_group(name: str) -> str:
    """A kernel's name grouped with its siblings: its own identifier (kernel_word) without the
    trailing number Inductor gives each generated kernel ('triton_poi_fused_..._relu_10')."""
    return re.sub(r"_\d+$", "", kernel_word(name))


def _of_class(group: str, kind: str | None, top: str) -> bool:
    """Whether a kernel belongs to the class `top`: by its classified kind, or for norms by its
    name (the record keeps names cut at 90 characters, and a cut native BatchNorm kernel
    classifies as 'other')."""
    return kind == top or (top == "reductions/norms" and "norm" in group)


def kernels_moved(before: ladder.Rung, after: ladder.Rung, most: int = 3) -> str:
    """The kernels a step removed and added most (the `most` largest moves), by name, from the
    two profiles' most launched kernels: 'kernels 282 -> 106: -53 bn_fw_inf_1C11_kernel_NHWC, +36 triton_poi_fused_...';
    '' when no name moved by a kernel per batch."""
    n0, n1 = before.kernel_names or {}, after.kernel_names or {}
    if not n0 or not n1:
        return ""
    moves: dict[str, float] = {}
    gemm, kind = set(), {}
    for names, sign in ((n1, 1.0), (n0, -1.0)):
        for n, count in names.items():
            moves[_kernel_group(n)] = moves.get(_kernel_group(n), 0.0) + sign * count
            kind[_kernel_group(n)] = timeline_stats.kind_class(n, "kernel")
            if kind[_kernel_group(n)] == GEMM:
                gemm.add(_kernel_group(n))
    # among kernels that moved as often, those of the class whose device time moved most first
    b = before.settings.batch
    m0, m1 = class_ms(before, b), class_ms(after, b)
    top = max(set(m0) | set(m1), key=lambda k: abs(m1.get(k, 0.0) - m0.get(k, 0.0)), default="")
    # a GEMM/conv's tile variants trade places between steps: not a mechanism, not named
    moves = {n: d for n, d in moves.items() if n not in gemm}
    ranked = sorted(((d, n) for n, d in moves.items() if abs(d) >= 1),
                    key=lambda m: (-round(abs(m[0])), not _of_class(m[1], kind.get(m[1]), top)))
    named = ranked[:most - 1]
    # the last name the largest move of the other sign, where the first ones all went one way
    # (torch.compile: three eager kernels removed, then the Triton tail that took their place)
    other = [m for m in ranked[most - 1:] if named and all(m[0] * n[0] < 0 for n in named)]
    named += other[:1] or ranked[most - 1:most]
    removed = sorted(m for m in named if m[0] < 0)
    added = sorted((m for m in named if m[0] > 0), key=lambda m: -m[0])
    if not removed and not added:
        return ""
    # the counts per batch are the attribution table's column, beside the readings
    return "kernels " + ", ".join(f"{d:+.0f} {n}" for d, n in removed + added)


def own_pace(rung: ladder.Rung) -> float | None:
    """The host's pace in the rounds the step was decided on (us per eager launch, the median of
    the per-round probes of its last timing, else of its first comparison); None unprobed."""
    timings = rung.timings or []
    probes = (timings[-1].get("host_pace_us") if timings else None) or rung.host_pace_us
    return _median(probes) if probes else None




def border(rung: ladder.Rung) -> str:
    """The host's side of an eager rung, from the step's own rounds (review 2026-12-04l item 4).

    Host-bound (unprofiled idle over keep.IDLE_LIMIT): the host's time per batch is about the
    wall's, 'host ~ wall 10.28 ms per batch, 282 launches x 15.2 us = 4.3 ms of it':
    the launches' cost is one part of it (Python per module is the rest, not measured here).
    Otherwise 'host 247 launches x 15.7 us = 3.9 ms, device 9.17 ms'. ': at the border, either
    clock' only where that idle sits within BORDER_POINTS of the limit, where the host's pace
    that minute decides which clock judges. Before, the climb's slowest and fastest probes
    (10.3-44.2 us) put every eager rung 'at the border', fp16 at 60% idle among them. '' for a
    graph-launched rung or without a device clock or probe."""
    launches = (rung.host_launches or {}).get("kernel launches") or 0
    pace = own_pace(rung)
    if launches < 2 or pace is None or rung.device_s is None:
        return ""
    device, cost = 1e3 * rung.device_s, launches * pace / 1e3
    idle = step_idle(rung)
    if idle is not None and keep.IDLE_LIMIT < idle < 1:
        text = (f"host ~ wall {device / (1 - idle):.2f} ms per batch, "
                f"{launches:.0f} launches x {pace:.1f} us = {cost:.1f} ms of it")
    else:
        text = f"host {launches:.0f} launches x {pace:.1f} us = {cost:.1f} ms, device {device:.2f} ms"
    return text + (": at the border, either clock" if at_border(idle) else "")


def shown_border(rung: ladder.Rung) -> str:
    """`border` where a reading says it: the host binds the rung, or it sits at the border
    (the rest stays with the step's folded figures)."""
    idle = step_idle(rung)
    return border(rung) if idle is not None and idle >= keep.IDLE_LIMIT - BORDER_POINTS else ""


def _gained(gain: float | None, spread: tuple[float, float] | None) -> bool:
    return gain is not None and keep.above(spread) and gain > 1 + MATERIAL


def _lost(gain: float | None, spread: tuple[float, float] | None) -> bool:
    return gain is not None and keep.below(spread) and gain < 1 - MATERIAL


def class_moves(before: ladder.Rung, after: ladder.Rung) -> list[str]:
    """The kernel classes whose share of device time moved by more than CLASS_MOVE, largest first."""
    names = set(before.kinds) | set(after.kinds)
    moves = sorted(((after.kinds.get(n, 0.0) - before.kinds.get(n, 0.0), n) for n in names),
                   key=lambda m: -abs(m[0]))
    return [f"{n} {100 * before.kinds.get(n, 0.0):.0f}% -> {100 * after.kinds.get(n, 0.0):.0f}%"
            for delta, n in moves if abs(delta) > CLASS_MOVE]


def kernel_change(before: ladder.Rung, after: ladder.Rung) -> str:
    """What a rise in kernels per batch is made of, by class and by the names added most, from
    the two rungs' profiles; '' when the count did not rise by more than 5%. A record made
    before the counts by class were kept says the kernels are not identified."""
    k0, k1 = before.kernels_per_batch, after.kernels_per_batch
    if k0 is None or k1 is None or k1 <= 1.05 * k0:
        return ""
    c0, c1 = before.kernel_counts or {}, after.kernel_counts or {}
    if not c0 or not c1:
        return " (which kernels were added is not in this record)"
    rose = sorted(((c1.get(n, 0.0) - c0.get(n, 0.0), n) for n in set(c0) | set(c1)), key=lambda m: -m[0])
    classes = ", ".join(f"{n} {d:+.0f}" for d, n in rose if abs(d) >= 1)
    n0, n1 = before.kernel_names or {}, after.kernel_names or {}
    added = sorted(((n1[n] - n0.get(n, 0.0), n) for n in n1), key=lambda m: -m[0])
    names = "; ".join(f"{d:+.0f} {n}" for d, n in added[:2] if d >= 1)
    return f" ({classes}" + (f"; most added: {names}" if names else "") + ")"


def base_idle(before: ladder.Rung, after: ladder.Rung) -> float | None:
    """The base's idle share in the step's own rounds (its first comparison's only when this
    step's comparison did not re-time it): what the keep rule read."""
    here = after.here.get(before.name, {})
    return here.get("idle_share", before.idle_share) if here else before.idle_share


def step_idle(after: ladder.Rung) -> float | None:
    """The rung's idle in the timing its step was decided on (a re-time's when it was re-timed),
    the partner of base_idle: both from one comparison, as the keep rule read them."""
    timings = after.timings or []
    return timings[-1].get("idle") if len(timings) > 1 else after.idle_share


def numbers(before: ladder.Rung, after: ladder.Rung) -> str:
    """The measured figures of one step, as one line."""
    parts = [f"{after.gain:.2f}x wall" + (f" ({after.gain_spread[0]:.2f} to {after.gain_spread[1]:.2f})"
                                           if after.gain_spread else "")]
    if after.device_gain is not None:
        low, high = after.device_spread or (after.device_gain, after.device_gain)
        parts.append(f"{after.device_gain:.2f}x device time per image ({low:.2f} to {high:.2f})")
    i0 = base_idle(before, after)
    i1 = step_idle(after)
    if i0 is not None and i1 is not None:
        parts.append(f"GPU idle {100 * i0:.0f}% -> {100 * i1:.0f}% (in these rounds)")
    if before.kernels_per_batch is not None and after.kernels_per_batch is not None:
        parts.append(f"kernels per batch {before.kernels_per_batch:.0f} -> {after.kernels_per_batch:.0f}"
                     + kernel_change(before, after))
    l0, l1 = before.host_launches, after.host_launches
    if l0 and l1 and l0 != l1:
        parts.append("host launch calls per batch " + ", ".join(
            f"{k} {l0.get(k, 0):.0f} -> {l1.get(k, 0):.0f}" for k in l1 if l0.get(k) or l1.get(k)))
    cause = half_batchnorm(before, after, kernel_jump(before, after) or kernels_moved(before, after))
    if cause:
        parts.append(cause)
    edge = border(after)
    if edge:
        parts.append(edge)
    moves = class_moves(before, after)
    if moves:
        of = "device time" if after.device_s is not None else "CPU op self time"
        parts.append(f"share of {of}: " + ", ".join(moves[:2]))
    return "; ".join(parts)


def reading(before: ladder.Rung, after: ladder.Rung) -> str:
    """What the figures say happened (empty when they say nothing clear)."""
    wall_up, wall_down = _gained(after.gain, after.gain_spread), _lost(after.gain, after.gain_spread)
    if after.device_gain is None:  # a CPU: one clock only
        said = ("faster on the wall clock" if wall_up else
                "slower on the wall clock" if wall_down else "no measured change on the wall clock")
        # with the class whose share of the CPU's time moved most, as a GPU reading names one
        # (review 2026-12-05u item 6: bf16 autocast read 'slower' beside copies/layout 0% -> 28%)
        moves = class_moves(before, after)
        return said + (f"; {moves[0]}" if moves else "")
    dev_up, dev_down = (_gained(after.device_gain, after.device_spread),
                        _lost(after.device_gain, after.device_spread))
    said = []
    if wall_up and not dev_up:
        said.append("the gain is the host's: the device did "
                    + ("more work, not less" if dev_down else "not get faster"))
        k0, k1 = before.kernels_per_batch, after.kernels_per_batch
        l0, l1 = before.host_launches or {}, after.host_launches or {}
        calls0 = l0.get("kernel launches", 0) + l0.get("graph launches", 0)
        calls1 = l1.get("kernel launches", 0) + l1.get("graph launches", 0)
        if calls0 and calls1 and calls1 < 0.95 * calls0:
            # counted from the trace's runtime calls: a CUDA graph replays all its kernels
            # from one host call, so the GPU's kernel count and the host's launches part ways
            said.append(f"host launch calls {calls0:.0f} -> {calls1:.0f} a batch"
                        + (f", kernels {k0:.0f} -> {k1:.0f}"
                           if k0 is not None and k1 is not None and k1 >= 0.95 * k0 else ""))
        elif k0 is not None and k1 is not None:
            if k1 >= 0.95 * k0:
                said.append(f"with as many kernels ({k0:.0f} -> {k1:.0f}) the host spent less time "
                            "per kernel it launched, not fewer launches")
            else:
                said.append(f"the host launched fewer kernels ({k0:.0f} -> {k1:.0f})")
    elif dev_up and wall_down:
        # the wall lost although the device did less: the host did more per batch, and the
        # kernel count says whether it launched more (fp16 weights on the H200: 179 -> 282)
        said.append("the device's work shrank but the wall lost: the host set the pace and did "
                    "more work per batch")
        k0, k1 = before.kernels_per_batch, after.kernels_per_batch
        if k0 is not None and k1 is not None and 1.05 * k0 < k1 <= (1 + KERNEL_JUMP) * k0:
            said.append(f"it launched more kernels ({k0:.0f} -> {k1:.0f} per batch)")
    elif dev_up and not wall_up:
        said.append("the device's work shrank while the host set the pace: the wall did not follow")
    elif dev_up and wall_up and after.gain < PART_WAY * after.device_gain:
        said.append(f"the device's work shrank ({after.device_gain:.2f}x) and the wall followed "
                    f"part way ({after.gain:.2f}x)")
    elif dev_up and wall_up:
        said.append("both clocks gained")
    elif dev_down and wall_down:
        said.append("the device did more work and the wall lost too")
    elif dev_down:
        said.append("the device did more work and the wall did not gain")
    elif wall_down:
        said.append("the wall lost while the device time held: the host did more work per batch")
    else:
        said.append(f"neither clock moved by more than its spread or {100 * MATERIAL:.0f}%")
    # what moved in the profile (review 2026-12-04j item 1): the class whose device ms moved
    # most, with its sign, then the kernels removed and added by name (one kernel become
    # several said as such)
    shift = class_shift(before, after)
    if shift:
        said.append(shift)
    moved = kernel_jump(before, after) or kernels_moved(before, after)
    if moved:
        said.append(moved)
    norm = batchnorm_ran_as(before, after, moved)
    if norm:
        said.append(norm)
    # the cause (read in PyTorch's source) is folded with the figures; the takeaway gives the
    # lesson (review 2026-12-04l items 2 and 6: each thing once, the GPU page's words)
    edge = shown_border(after)
    if edge:
        said.append(edge)
    i0, i1 = base_idle(before, after), step_idle(after)
    if i0 is not None and i1 is not None:
        limit = keep.IDLE_LIMIT
        if i0 > limit >= i1:
            said.append(f"the host stopped binding the rung (idle {100 * i1:.0f}% <= {100 * limit:.0f}%)")
        elif i1 > limit >= i0:
            said.append(f"the host now binds the rung (idle {100 * i1:.0f}% > {100 * limit:.0f}%)")
        elif i1 > limit:
            said.append(f"the host still binds the rung (idle {100 * i1:.0f}% > {100 * limit:.0f}%)")
        elif i1 - i0 > IDLE_RISE:
            said.append(f"GPU idle rose {100 * i0:.0f}% -> {100 * i1:.0f}%: more host-bound")
    return "; ".join(said)


# Why BatchNorm's cuDNN kernel became three native ones when the whole model went to float16
# (review 2026-12-04k item 2), as read in PyTorch's source (aten/src/ATen/native/Normalization.cpp,
# `_select_batch_norm_backend`), not measured: cuDNN is chosen for a half input only when the
# BatchNorm weight is float32, and model.to(float16) converts that weight too. The profile shows
# the effect (the kernels named beside this line); this names the cause, labelled as read.
HALF_BN_CAUSE = ("why (read in PyTorch's source, not measured): _select_batch_norm_backend keeps "
                 "cuDNN for half inputs only with float32 weights, and model.to({dtype}) halved them")


def half_batchnorm(before: ladder.Rung, after: ladder.Rung, moved: str) -> str:
    """The cause of BatchNorm's extra kernels on a whole-model half-precision step
    (HALF_BN_CAUSE), said only where the step converted the weights (not autocast) from float32
    and the profile's kernel moves show cuDNN's BatchNorm kernel ('bn_fw') removed; '' otherwise."""
    half = after.settings.dtype in ("float16", "bfloat16") and before.settings.dtype == "float32"
    if not half or after.settings.autocast or "bn_fw" not in moved:
        return ""
    return HALF_BN_CAUSE.format(dtype=after.settings.dtype)


def batchnorm_ran_as(before: ladder.Rung, after: ladder.Rung, moved: str = "") -> str:
    """On a step to half precision, the BatchNorm kernels the rung's own profile launched, by
    name and count per batch: 'BatchNorm ran as 53 bn_fw_inf_1C11_kernel_NHWC a batch'; '' on
    other steps, without a profile, when no kernel's name is a BatchNorm's, or when `moved`
    (the reading's kernel moves) already names them. Why: the plan said fp16's BatchNorm ran
    in cuDNN's kernel, which nobody had profiled (review 2026-12-04n item 1: in eval mode a
    half input with float32 weights may take ATen's own mixed-type path); the profile says."""
    half = after.settings.dtype in ("float16", "bfloat16") and before.settings.dtype == "float32"
    names = after.kernel_names or {}
    if not half or not names:
        return ""
    found: dict[str, float] = {}
    for n, count in names.items():
        word = kernel_word(n)
        if re.search(r"(^|_)(bn|batch_?norm)(_|$)", word, re.IGNORECASE) and count >= 1:
            found[word] = found.get(word, 0.0) + count
    named = [(c, w) for w, c in sorted(found.items(), key=lambda m: -m[1]) if w not in moved]
    if not named:
        return ""
    return (batchnorm_kept() + ", ran as " + ", ".join(f"{c:.0f} {w}" for c, w in named[:2]) + " a batch")


# The fp16 rung keeps BatchNorm in float32 (`ladder.batchnorm_float32`), a setting no keep rule
# of this ladder decides; chapter 09's float16 audit times it against all-half BatchNorm on both
# clocks. The reading says what it is set against and quotes that audit's record (review
# 2026-12-05u item 4: 'fewer launches, more device time' read as contradicting the step's own
# device-time drop, 7.49 -> 4.72 ms, and named no comparison).
BATCHNORM_KEPT = "BatchNorm kept float32"
AUDIT_CHAPTER, AUDIT_KEY = "09_audit_your_model", "audit_resnet50_fp16"


def batchnorm_kept(machine: str | None = None) -> str:
    """'BatchNorm kept float32 (against all-half: 176 against 282 launches a batch, 1.12x the
    stream's time in 09's recorded audit)', read from chapter 09's float16 audit in the reference
    record (results/<machine>.json, labelled recorded); without it (or a record missing a
    field), 'BatchNorm kept float32 (not timed against all-half here)'."""
    try:
        payload = results.recorded(AUDIT_CHAPTER, AUDIT_KEY, machine or results.DEFAULT_REFERENCE) or {}
        fix = next(r for r in payload.get("recommendations") or []
                   if str(r.get("title", "")).startswith("keep BatchNorm float32"))
        half, kept = (int(n) for n in fix["launches"])
        ratio = float(fix["ratio"])
    except (StopIteration, KeyError, TypeError, ValueError, AttributeError, OSError):
        return f"{BATCHNORM_KEPT} (not timed against all-half here)"
    clock = "the stream's time" if "CUDA events" in str(fix.get("clock", "")) else "the time"
    return (f"{BATCHNORM_KEPT} (against all-half: {kept} against {half} launches a batch, "
            f"{ratio:.2f}x {clock} in 09's recorded audit)")


def _median(values: list) -> float | None:
    return float(sorted(values)[len(values) // 2]) if values else None


def pace(before: ladder.Rung, after: ladder.Rung) -> str:
    """The host's pace (us per eager launch, the median of the per-round probes) in the rounds
    the step was decided on, beside its base's own step's; '' when either was not probed."""
    timings = after.timings or []
    here = _median(timings[-1].get("host_pace_us") or []) if timings else _median(after.host_pace_us)
    own = _median(before.host_pace_us)
    if here is None or own is None:
        return ""
    return f"host pace {here:.1f} us/launch here, {own:.1f} in its base's step"


def device_reading(before: ladder.Rung, after: ladder.Rung) -> str:
    """What a step did on the device alone, from kernel records and the two profiles ('Device
    time alone: 1.01x (same work); 106 kernels, launched as 1 graph.'): what a step whose base
    moved can still be read by, since the device clock does not follow the host's pace (review
    2026-12-03g item 6: torch.compile's 1.97x device time and CUDA Graphs' one graph launch for
    106 kernels went unexplained). '' without a device clock (a CPU)."""
    gain, spread = after.device_gain, after.device_spread
    if gain is None or spread is None:
        return ""
    work = "less work" if _gained(gain, spread) else "more work" if _lost(gain, spread) else "same work"
    said = [f"Device time alone: {gain:.2f}x ({work})"]
    k0, k1 = before.kernels_per_batch, after.kernels_per_batch
    graphs = (after.host_launches or {}).get("graph launches") or 0
    if k0 and k1 and graphs and not (before.host_launches or {}).get("graph launches"):
        said.append(f"{k1:.0f} kernels, launched as {graphs:.0f} graph")
    elif k0 and k1:
        # a jump in kernels named by what was added, beside the reading it explains (review
        # 2026-12-04m item 1: fp16's BatchNorm kernels were shown only in the C24 evidence JSON)
        said.append(kernel_jump(before, after) or f"{k0:.0f} -> {k1:.0f} kernels")
    said += class_moves(before, after)
    return "; ".join(said) + "."


def parts(before: ladder.Rung, after: ladder.Rung) -> tuple[str, str]:
    """One step as (its figures, the reading they support). When its base moved the figures
    end 'Not read: its base moved.' and the reading is the device's alone (`device_reading`,
    '' on a CPU); a failed step's figures are its reason. A notebook shows the reading and
    folds the figures (issue 37)."""
    if after.error or after.gain is None:
        return after.why, ""
    timings = after.timings or []
    if after.judged_by == keep.NOT_DECIDABLE or (timings and timings[-1].get("base_moved")):
        # decided or not, a gain over a base that moved in every timing is not read: its wall
        # gain and the host's pace in its rounds beside its base's are all that is shown
        host = pace(before, after)
        return (f"{after.gain:.2f}x wall" + (f"; {host}" if host else "")
                + ". Not read: its base moved."), device_reading(before, after)
    figures = numbers(before, after)
    if len(timings) > 1:
        figures += f" (re-timed {len(timings) - 1}x: its base moved)"
    said = reading(before, after)
    if said and after.unstable:
        said += " (unstable: tentative)"
    return figures, (f"{said[0].upper()}{said[1:]}." if said else "")


def not_read(before: ladder.Rung, after: ladder.Rung) -> str:
    """Why a step whose base moved is not explained, with how far the base moved: 'Not read: its
    base ran 0.73x, 1.10x its own timing when re-timed (the machine's pace, not the step).'
    Why: the CPU page read 'Not read: its base moved' on all three steps, saying neither how far
    nor why that stops a reading (review 2026-12-04k item 5)."""
    own = before.images_per_s
    moves = [t["base_images_per_s"] / own for t in after.timings or []
             if own and t.get("base_images_per_s")]
    if not moves:
        return "Not read: its base moved, so a profile difference would be the machine's pace."
    said = ", ".join(f"{m:.2f}x" for m in moves)
    return f"Not read: its base ran {said} its own timing when re-timed (the machine's pace, not the step)."


def step(before: ladder.Rung, after: ladder.Rung) -> str:
    """One step: its figures, then the reading they support (none when its base moved)."""
    figures, said = parts(before, after)
    if not said:
        return figures if figures.endswith(".") or after.error or after.gain is None else figures + "."
    return f"{figures} {said}" if figures.endswith(".") else f"{figures}. {said}"
