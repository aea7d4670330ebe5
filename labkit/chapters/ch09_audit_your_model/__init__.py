"""Chapter 09: the course's instruments pointed at any network (see audit.run)."""
