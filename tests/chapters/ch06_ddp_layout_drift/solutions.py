"""Chapter 06's exercises solved: a right solution of each (RIGHT) and the plausible
wrong ones (WRONG) that tests/exercises/test_every_exercise.py grades, with helpers the
chapter's own tests share."""



def copy_in_order(shape, src_stride, dst_stride):
    return all(a == b for n, a, b in zip(shape, src_stride, dst_stride, strict=True) if n != 1)


def _contiguous(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def drift_report(shape, grad_stride):
    param = _contiguous(shape)
    obeys = all(g == p for n, g, p in zip(shape, grad_stride, param, strict=True) if n != 1)
    kept = tuple(grad_stride) if obeys else param
    return kept, kept != param


RIGHT = {
    "06.copy_in_order": copy_in_order,
    "06.drift_report": drift_report,
}


WRONG = {
    "06.copy_in_order": [
        lambda shape, a, b: tuple(a) == tuple(b),  # forgets size-1 dims
        lambda shape, a, b: True,  # "a copy is a copy"
    ],
    "06.drift_report": [
        lambda shape, g: (_contiguous(shape), False),  # "AccumulateGrad always restrides"
        lambda shape, g: (tuple(g), tuple(g) != _contiguous(shape)),  # "it always keeps the kernel's"
        # "size-1 dims do not count for DDP either"
        lambda shape, g: (drift_report(shape, g)[0], not copy_in_order(shape, drift_report(shape, g)[0],
                                                                        _contiguous(shape))),
    ],
}
