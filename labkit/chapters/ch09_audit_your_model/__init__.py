"""Chapter 09: the course's instruments pointed at any network (they live in labkit.audit)."""
