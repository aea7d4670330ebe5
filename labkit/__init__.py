"""labkit: the instruments of the Tensor Layout Lab.

Import modules, not names, so a reader sees where each helper lives::

    from labkit import layout, bench
    layout.addresses(x)
    bench.time(fn)
"""

__version__ = "0.1.0"
