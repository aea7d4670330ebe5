"""labkit: the instruments of the Tensor Layout Lab.

Import modules, not names, so a reader sees where each helper lives::

    from labkit.core import layout
    from labkit.measure import bench
    layout.addresses(x)
    bench.time(fn)
"""

__version__ = "0.1.0"

# The top floor wires the floors below: the chapters install their own discovery (see
# labkit.chapters), so the registries find them without importing upward.
import labkit.chapters  # noqa: E402, F401
