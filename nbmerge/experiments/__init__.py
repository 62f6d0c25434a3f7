"""Logic behind the report notebooks: one module per notebook, plus what they share (common)."""
