"""z0-memory."""
