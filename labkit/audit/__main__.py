"""Entry point: parse the command line and run the audit (labkit.audit.cli).

The profiler's C++ layer (kineto) is quieted first, as a chapter's session does: its
'USDT: ... profiler_start' lines on stderr say nothing the report reads (KINETO_LOG_LEVEL=6,
unless the environment sets it already)."""

import os
import sys

os.environ.setdefault("KINETO_LOG_LEVEL", "6")

from labkit.audit.cli import main  # noqa: E402 -- after the profiler's log level is set

sys.exit(main())
