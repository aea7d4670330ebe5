"""Entry point: parse the command line and run the audit (labkit.audit.cli)."""

import sys

from labkit.audit.cli import main

sys.exit(main())
