"""z0-memory graphs."""
