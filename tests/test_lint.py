"""The linter's rules (pyproject.toml: pyflakes, syntax, import order, the 140-column line
width) and its formatting hold for every Python file, as in CI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CODE = ["pipeline", "tests", "bench"]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["check", "format"])
def test_ruff_passes(command: list[str]) -> None:
    ruff = Path(sys.executable).with_name("ruff")
    result = subprocess.run([str(ruff), *command, *CODE], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
