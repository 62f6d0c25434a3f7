"""Where a result came from: the project root and its git commit (recorded in zoo manifests and reports)."""

from __future__ import annotations

import subprocess
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def git_sha(dirty: bool = False) -> str:
    """HEAD of the project's checkout ("unknown" outside one); ``dirty`` appends "-dirty" for tracked changes."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(PROJECT_ROOT), *args], capture_output=True, text=True, check=True,
                              timeout=10).stdout.strip()

    try:
        sha = git("rev-parse", "HEAD")
        if dirty and git("status", "--porcelain", "--untracked-files=no"):
            sha += "-dirty"
        return sha
    except (OSError, subprocess.SubprocessError):
        return "unknown"
