"""Chapter 01's cases and tables, moved out of the notebook so it shows measurements.

The notebook used to define these itself (the views C3 places, the address check, a `try:
t.view(...)` wrapper, the quiz answers' small probes) and to print its tables column by column,
so a learner read formatting and set-up code between each prediction and its measurement.
They live here, each named for what it gives; the notebook reaches them as
`chapter.lab.views`. Nothing here decides a verdict: the checks are in `claims.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import torch

from labkit.core import layout
from labkit.measure import copies
from labkit.show import figures
from labkit.show.table import Table

DTYPES = (torch.int8, torch.int16, torch.float32, torch.float64)  # C3's four element sizes


def grid_and_strip(t: torch.Tensor, highlight: tuple[int, ...] | None = None) -> object:
    """The tensor's logical grid above its storage strip, one element outlined: the shared
    picture (`labkit.show.figures.grid_and_strip`), reached through the chapter's door."""
    return figures.grid_and_strip(t, highlight=highlight)


def views_of(storage: torch.Tensor) -> dict[str, torch.Tensor]:
    """C3's views: offsets, steps, swaps, broadcasts and overlap, all on one storage
    (at least 24 elements)."""
    if storage.dim() != 1 or storage.numel() < 24:
        raise ValueError(f"views_of needs a 1-D storage of at least 24 elements, got shape "
                         f"{tuple(storage.shape)}")
    m = storage[:24].view(2, 3, 4)
    return {
        "contiguous [2,3,4]": m,
        "permute(0,2,1)": m.permute(0, 2, 1),
        "transpose(0,1)": m.transpose(0, 1),
        "slice m[1:, 1:, 2:]": m[1:, 1:, 2:],
        "step m[:, ::2, ::3]": m[:, ::2, ::3],
        "narrow(2, 1, 2)": m.narrow(2, 1, 2),
        "expand (stride 0)": storage[:4].view(1, 4).expand(3, 4),
        "unfold windows": storage[:10].unfold(0, 3, 2),
        "diagonal": storage[:16].view(4, 4).diagonal(),
    }


def address_check(dtype: torch.dtype) -> tuple[int, int, int, int]:
    """(elements, off the seed's formula in elements, off it read as bytes, off the full byte
    formula) over `views_of` a storage of this dtype filled with its own index.

    The value an element reads *is* the storage index it lives at, so the real address never
    comes from the formula under test."""
    storage = torch.arange(64).to(dtype)
    base = storage.untyped_storage().data_ptr()
    itemsize = storage.element_size()
    counts = [0, 0, 0, 0]
    for view in views_of(storage).values():
        stored_at = view.to(torch.int64)  # the storage index each element really reads
        real = base + itemsize * stored_at  # its byte address
        strides_sum = torch.zeros_like(stored_at)
        for dim, stride in enumerate(view.stride()):
            shape = [1] * view.dim()
            shape[dim] = view.shape[dim]
            strides_sum = strides_sum + torch.arange(view.shape[dim]).view(shape) * stride
        first = (view.data_ptr() - base) // itemsize  # the view's first element, in elements
        counts[0] += view.numel()
        counts[1] += int((stored_at != first + strides_sum).sum())  # the seed, in elements
        counts[2] += int((real != view.data_ptr() + strides_sum).sum())  # the seed read as bytes
        counts[3] += int((real != base + itemsize * (view.storage_offset() + strides_sum)).sum())
    return counts[0], counts[1], counts[2], counts[3]


def address_table(rows: Mapping[str, Sequence[int]]) -> Table:
    """C3's counts per dtype (`address_check`'s tuples) as a table; the full byte formula's
    misses are a note, since the chapter asserts they are zero."""
    shown = Table("elements placed by the seed's formula", ["dtype", "elements", "off the seed formula (elements)",
                                                             "read as bytes"])
    for name, (count, in_elements, in_bytes, _) in rows.items():
        shown.add(name, count, in_elements, in_bytes)
    full = sum(r[3] for r in rows.values())
    return shown.note(f"off the full byte formula (storage base + itemsize x (offset + sum)): {full}")


def tour(makers: Mapping[str, Callable[[torch.Tensor], torch.Tensor]], storage: torch.Tensor) -> Table:
    """One row per view made from `storage`: shape, strides, offset, the bytes the copy
    detector saw copied, whether it shares the storage, and its kind (`layout.classify`)."""
    shown = Table("views of one 24-element storage", ["view", "shape", "stride", "offset", "copied",
                                                      "shares storage", "kind"], units={"copied": "B"})
    for name, make in makers.items():
        with copies.detect() as log:
            view = make(storage)
        shown.add(name, str(tuple(view.shape)), str(view.stride()), view.storage_offset(),
                  log.total_bytes, copies.shares_storage(view, storage), layout.classify(view).kind)
    return shown


def try_view(t: torch.Tensor, shape: tuple[int, ...]) -> tuple[bool, str, str]:
    """Run t.view(shape): (succeeded, exception type, message), the real exception whatever it is."""
    try:
        out = t.view(shape)
    except Exception as err:  # noqa: BLE001 -- the exception itself is the evidence
        return False, type(err).__name__, str(err)
    return True, "", f"ok: shape {tuple(out.shape)}, strides {out.stride()}"


def view_attempts(t: torch.Tensor, shapes: Sequence[tuple[int, ...]]) -> Table:
    """What t.view(shape) does for each shape, beside what `layout.can_view` predicted."""
    shown = Table("", ["view", "torch", "layout.can_view predicted", "as predicted"])
    for shape in shapes:
        ok, kind, message = try_view(t, shape)
        predicted = layout.can_view(t, shape).ok
        shown.add(f"view{shape}", message if ok else f"{kind}: {message}",
                  "ok" if predicted else "failure", ok == predicted)
    return shown


def broadcast_result(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> str:
    """The shape of ones(a) + ones(b), or 'an error' (C8b's quiz answer)."""
    try:
        return str(tuple((torch.ones(a_shape) + torch.ones(b_shape)).shape))
    except RuntimeError:
        return "an error"


def broadcast_cases(pairs: Sequence[tuple[tuple, tuple, object, str]]) -> list[dict]:
    """C8b's evidence: for each (a shape, b shape, what the seed says, the seed's message),
    what ones(a) + ones(b) gives here, or the error it raises."""
    cases = []
    for a_shape, b_shape, seed_says, seed_message in pairs:
        try:
            observed, message = list((torch.ones(a_shape) + torch.ones(b_shape)).shape), ""
        except RuntimeError as err:
            observed, message = "error", str(err)
        cases.append({"a": list(a_shape), "b": list(b_shape), "seed_says": seed_says,
                      "seed_message": seed_message, "observed": observed, "message": message})
    return cases


def raised_by(fn: Callable[[], object]) -> str:
    """The name of the exception fn() raises, or 'nothing: it works' (C8c's quiz answer)."""
    try:
        fn()
    except Exception as err:  # noqa: BLE001 -- the exception's type is the answer
        return type(err).__name__
    return "nothing: it works"


def captured_correctly(tools: Mapping[str, dict]) -> str:
    """C11b's quiz answer: 'none', 'some' or 'all of them' of the tools this torch has
    captured the function and matched eager."""
    here = [r for r in tools.values() if r["available"]]
    worked = sum(r["ok"] and r["matches_eager"] for r in here)
    return "none" if worked == 0 else "all of them" if worked == len(here) else "some"


def capture_table(tools: Mapping[str, dict]) -> Table:
    """C11b's capture results (`captures.capture_all`), one row per tool; the warnings the
    tools raised are folded under the table."""
    shown = Table("capturing window_sums", ["tool", "captured", "matches eager", "longer input", "error"])
    warned = []
    for name, result in tools.items():
        shown.add(name, result["ok"], result["matches_eager"], result["matches_eager_longer_input"],
                  result["error"])
        warned += [f"{name}: {text}" for text in result["warnings"]]
    if warned:
        shown.fold(f"warnings the tools raised ({len(warned)})", "\n".join(warned))
    return shown


def tour_aside(tour_table: Table | None) -> str:
    """The optional tour's result for the first takeaway, labelled as optional, or '' where the
    tour did not run (review 2026-12-06z 00-02 item 7: the takeaway read the tour's variables, so
    a room that skipped that optional section got a NameError; the core line stands on C1 alone)."""
    if tour_table is None:
        return ""
    copied, shared = tour_table.column("copied"), tour_table.column("shares storage")
    return (f" (the optional tour: {sum(shared)} of {len(copied)} views share the storage, "
            f"{sum(copied)} bytes copied)")


def c8c_takeaway(c8c: object) -> str:
    """The optional C8c's line for the takeaways, labelled as optional, from its verdict's evidence
    (review 2026-12-06z 00-02 item 7: it was read from that section's variables, a NameError where
    the section was skipped; the notebook adds it only where `c8c` exists)."""
    ev = c8c.evidence
    raised = (f"raised {ev['error_type']} ('{ev['error_message']}')" if ev.get("raised")
              else "raised nothing")
    return (f"Read the real error (an optional section): permute(0, 0, 1) {raised}; the seed says "
            f"IndexError: repeated dim (C8c {c8c.outcome}).")
