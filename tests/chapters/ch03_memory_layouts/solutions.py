"""Chapter 03's exercises solved: a right solution of each (RIGHT) and the plausible
wrong ones (WRONG) that tests/exercises/test_every_exercise.py grades, with helpers the
chapter's own tests share."""



def channels_last_strides(shape):
    n, c, h, w = shape
    return (h * w * c, 1, w * c, c)


def element_at(shape, position):
    n, c, h, w = shape
    position, channel = divmod(position, c)
    position, column = divmod(position, w)
    batch, row = divmod(position, h)
    return (batch, channel, row, column)


def row_major_strides(shape):  # the NCHW strides: forgets the layout
    return (shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1)


def element_at_in_nchw_order(shape, position):  # reads the position as an NCHW offset
    n, c, h, w = shape
    return (position // (c * h * w), position // (h * w) % c, position // w % h, position % w)


RIGHT = {"03.channels_last_strides": channels_last_strides, "03.element_at": element_at}
WRONG = {"03.channels_last_strides": [row_major_strides], "03.element_at": [element_at_in_nchw_order]}
