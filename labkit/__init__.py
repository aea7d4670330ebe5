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
import warnings as _warnings  # noqa: E402

import labkit.chapters  # noqa: E402, F401

# torch.profiler warns once a process, when a profiler starts its second cycle, that it "clears
# events at the end of each cycle". labkit's profiled windows read each cycle's own events by
# design, so the note says nothing a learner can act on; it printed under a cell on five GPU
# pages (about 25 words each, against the 1,500-word limit). Only that message is silenced.
_warnings.filterwarnings("ignore", message="Warning: Profiler clears events at the end of each cycle")
