"""`python -m labkit.audit`: the command line of chapter 09's audit (the logic lives there)."""
