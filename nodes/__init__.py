"""z0-memory nodes."""
