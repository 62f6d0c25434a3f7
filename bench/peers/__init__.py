"""Side-by-side checks against peer implementations, each run in its own virtual environment."""
