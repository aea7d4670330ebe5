"""Chapter 09's exercises solved: the audit's own functions are the right solutions (RIGHT),
and WRONG holds the plausible wrong ones that tests/exercises/test_every_exercise.py grades."""

from labkit.audit import ddp_contract, module_layouts

RIGHT = {"09.layout_verdict": module_layouts.layout_verdict, "09.drift_status": ddp_contract.status}
WRONG = {"09.layout_verdict": [lambda a, b, n: "kept"], "09.drift_status": [lambda shape: None]}
