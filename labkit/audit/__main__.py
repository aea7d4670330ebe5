"""Entry point: parse the command line and run chapter 09's audit."""

import sys

from labkit.chapters.ch09_audit_your_model.cli import main

sys.exit(main())
