"""The audit: labkit's instruments pointed at any network, and the export paths it runs.

Shared by chapter 07 (which teaches the export paths, `export_audit`), chapter 09 (which
audits a learner's own model) and `python -m labkit.audit` (the command line, `cli`), so it
lives here rather than in either chapter's folder. It sits below the chapters and above the
models layer; it needs no session, claim or exercise.
"""
