"""Chapter 07's exercises solved: a right solution of each (RIGHT) and the plausible
wrong ones (WRONG) that tests/exercises/test_every_exercise.py grades, with helpers the
chapter's own tests share."""



def reads_correctly(shape, stride):
    expected = 1
    for size, step in reversed(list(zip(shape, stride, strict=True))):
        if size != 1 and step != expected:
            return False
        expected *= size
    return True


def reads_correctly_strict(shape, stride):  # forgets that a size-1 dim's stride is free
    expected = 1
    for size, step in reversed(list(zip(shape, stride, strict=True))):
        if step != expected:
            return False
        expected *= size
    return True


def engine_sees(x):
    strides, step = [], 1
    for size in reversed(x.shape):
        strides.append(step)
        step *= size
    return x.as_strided(x.shape, tuple(reversed(strides)))


def engine_sees_logical(x):  # the values as the strides say: what a stride-aware reader sees
    return x.contiguous()


def nhwc_as_nchw(buffer, n, c, h, w):
    return buffer.view(n, h, w, c).permute(0, 3, 1, 2)


def nhwc_as_nchw_copying(buffer, n, c, h, w):
    return buffer.view(n, h, w, c).permute(0, 3, 1, 2).contiguous()


def nhwc_as_nchw_wrong_order(buffer, n, c, h, w):
    return buffer.view(n, c, h, w)


RIGHT = {"07.pointer_reads_correctly": reads_correctly, "07.what_the_engine_sees": engine_sees,
         "07.nhwc_buffer_as_nchw": nhwc_as_nchw}
WRONG = {"07.pointer_reads_correctly": [reads_correctly_strict],
         "07.what_the_engine_sees": [engine_sees_logical],
         "07.nhwc_buffer_as_nchw": [nhwc_as_nchw_copying, nhwc_as_nchw_wrong_order]}
