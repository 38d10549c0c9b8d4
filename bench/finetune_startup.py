"""How much of a finished run's fine-tuning stage went to anything but training and scoring.

    python bench/finetune_startup.py evidence      # a working directory the workflow ran in

For every fine-tuning job (``benchmarks/finetune*/<...>.tsv`` beside
``results/finetune*/<...>/scores.json``): its wall time as Snakemake measured it, minus the
seconds its grid points took (each grid point's ``seconds``: training, validation and test
scoring). What is left is start-up (interpreter, imports, task encoding, model load) and
writing out, the cost a warm worker (pipeline/warm_worker.py) cuts. Prints the share over
the stage and per job, and how many jobs ran in a warm worker (their logs' usage line).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
from pathlib import Path

from pipeline.report.render import worker_usage


def job_rows(root: Path) -> list[dict]:
    rows = []
    for rule_dir in sorted((root / "benchmarks").glob("finetune*")):
        for bench in sorted(rule_dir.rglob("*.tsv")):
            relative = bench.relative_to(root / "benchmarks").with_suffix("")
            scores = root / "results" / relative / "scores.json"
            if not scores.is_file():
                continue  # finetune_evaluated writes no benchmark; a job rerun since has none yet
            wall = float(next(csv.DictReader(bench.open(), delimiter="\t"))["s"])
            grid = sum(point["seconds"] for point in json.loads(scores.read_text())["grid"])
            rows.append({"job": str(relative), "wall": wall, "grid": grid, "warm": worker_usage(bench) is not None})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="the directory the workflow ran in (holds benchmarks/, results/, logs/)")
    root = parser.parse_args().root
    rows = job_rows(root)
    if not rows:
        raise SystemExit(f"{root}: no fine-tuning job with both a benchmark and a scores.json")
    wall, grid = sum(r["wall"] for r in rows), sum(r["grid"] for r in rows)
    outside = [r["wall"] - r["grid"] for r in rows]
    print(f"{root}: {len(rows)} fine-tuning jobs, {sum(r['warm'] for r in rows)} in a warm worker")
    print(f"  wall {wall:,.0f} s, grid points {grid:,.0f} s, outside the grid {wall - grid:,.0f} s = {100 * (wall - grid) / wall:.1f}%")
    print(f"  outside the grid per job: median {statistics.median(outside):.2f} s, mean {statistics.fmean(outside):.2f} s")


if __name__ == "__main__":
    main()
