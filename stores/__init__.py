"""z0-memory stores."""
