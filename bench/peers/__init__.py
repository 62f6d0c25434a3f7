"""Side-by-side checks against peer implementations, each run in its own virtual environment."""

import subprocess
import sys
from pathlib import Path


def install_pinned_venv(venv: Path, torch_version: str, requirement: str, what: str) -> Path:
    """A venv holding ``requirement`` over ``torch_version`` (pinned by a constraints file, so pip takes the local CPU
    build), made on first use; a marker file says it is complete, so an interrupted install starts again."""
    marker = venv / ".nbmerge-installed"
    if marker.exists():
        return venv
    print(f"installing {requirement} into {venv} ({what})", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    constraint = venv / "constraints.txt"
    constraint.write_text(f"torch=={torch_version}\n")
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-c", str(constraint)]
    subprocess.run(pip + [f"torch=={torch_version}"], check=True)
    subprocess.run(pip + [requirement], check=True)
    marker.write_text("ok\n")
    return venv
