"""Built-in agents shipped in the image: `null` (does nothing) and `scripted` (replays requests)."""
