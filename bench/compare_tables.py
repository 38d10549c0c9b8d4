"""Two runs' result tables side by side: every table of one ``results/tables`` against the other's,
cell by cell, but the columns that are timings (wall seconds, tokens per second, a grid point's
seconds). Prints what differs and exits 1 if anything does; 0 when the runs agree.

    python bench/compare_tables.py rehearsal/results/tables rehearsal_slurm/results/tables
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

TIMING = ("seconds", "tokens_per_second")  # a column whose name ends so is a measurement of time


def differences(first: Path, second: Path) -> list[str]:
    """One line per table missing on a side or per timing-free column whose values differ."""
    found = []
    names = sorted({path.name for path in (*first.glob("*.csv"), *second.glob("*.csv"))})
    for name in names:
        if not (first / name).is_file() or not (second / name).is_file():
            found.append(f"{name}: only in {first if (first / name).is_file() else second}")
            continue
        one, two = pd.read_csv(first / name), pd.read_csv(second / name)
        if list(one.columns) != list(two.columns) or len(one) != len(two):
            found.append(f"{name}: {one.shape} against {two.shape}, or other columns")
            continue
        for column in (c for c in one.columns if not c.endswith(TIMING)):
            if not one[column].equals(two[column]):
                found.append(f"{name}: column {column!r} differs")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    args = parser.parse_args()
    found = differences(args.first, args.second)
    tables = len(list(args.first.glob("*.csv")))
    print("\n".join(found) or f"{tables} tables equal but their timing columns")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
