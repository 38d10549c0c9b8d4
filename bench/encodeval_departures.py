"""What issue 52's departures from EncodEval moved: two runs of the same tier side by side, the one
fine-tuned before the fixes and the one after, per task and per family, from each run's
``results/tables/comparison.csv`` (MLM and CLM pooled over pretraining seeds, their difference, the
winner).

    python bench/encodeval_departures.py BEFORE_DIR AFTER_DIR > table.md

``BEFORE_DIR`` and ``AFTER_DIR`` are workflow directories (``--directory`` of snakemake) of one
config but the fine-tuning protocol (bench/encodeval_departures/{before,after}.yaml over
config/evidence.yaml): their pretraining runs are the same runs, so every difference is
fine-tuning's. Prints a Markdown table: each row's MLM, CLM and MLM - CLM before and after.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

KEY = ["level", "name", "family", "size"]


def read_comparison(workdir: Path) -> pd.DataFrame:
    path = workdir / "results" / "tables" / "comparison.csv"
    if not path.is_file():
        sys.exit(f"error: {path}: no such table; run the workflow in {workdir} first")
    return pd.read_csv(path)


def interval(row: pd.Series, prefix: str) -> str:
    return f"{row[prefix + 'mean']:+.1f} [{row[prefix + 'low']:+.1f}, {row[prefix + 'high']:+.1f}]"


def score(row: pd.Series, prefix: str) -> str:
    return f"{row[prefix + 'mean']:.1f} [{row[prefix + 'low']:.1f}, {row[prefix + 'high']:.1f}]"


def side(row: pd.Series, when: str) -> pd.Series:
    """One run's columns of a merged row, under their own names."""
    return pd.Series({column.removesuffix(f"_{when}"): value for column, value in row.items() if column.endswith(f"_{when}")})


def side_by_side(before: pd.DataFrame, after: pd.DataFrame) -> list[str]:
    merged = before.merge(after, on=KEY, suffixes=("_before", "_after"), validate="one_to_one")
    lines = [
        "| row | MLM before | MLM after | CLM before | CLM after | MLM − CLM before | MLM − CLM after | winner before → after |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for _, row in merged.sort_values(["family", "level", "name"]).iterrows():
        name = f"{row['family']} average" if row["level"] == "family" else f"{row['family']}: {row['name']}"

        b, a = side(row, "before"), side(row, "after")
        lines.append(
            f"| {name} | {score(b, 'mlm_')} | {score(a, 'mlm_')} | {score(b, 'clm_')} | {score(a, 'clm_')} "
            f"| {interval(b, 'difference_')} | {interval(a, 'difference_')} | {b['winner']} → {a['winner']} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    print("\n".join(side_by_side(read_comparison(args.before), read_comparison(args.after))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
