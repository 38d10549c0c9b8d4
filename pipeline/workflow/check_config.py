"""``python -m pipeline check-config FILE...``: validate config files as the workflow does.

The files are merged over config/default.yaml in order, as ``snakemake --configfile``
merges them, so an overlay (config/smoke.yaml, a seeds file) is checked as it will run.
"""

from __future__ import annotations

import argparse

from pipeline.workflow.configure import read_configs, resolve_files


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", help="YAML config files merged over config/default.yaml, e.g. config/smoke.yaml")


def run(args: argparse.Namespace) -> None:
    resolved = resolve_files(read_configs(args.paths), args.paths)
    studies = [p.study for p in resolved.plans.values()]
    counts = ", ".join(f"{studies.count(s)} {s}" for s in dict.fromkeys(studies))
    summary = f"{len(studies)} pretraining runs: {counts}; {len(resolved.config.finetuning.tasks)} tasks; {len(resolved.claims)} claims"
    print(f"{' '.join(args.paths)}: ok ({summary})")
