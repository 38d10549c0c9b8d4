"""``python -m pipeline check-config FILE``: validate a config as the Snakefile does."""

from __future__ import annotations

import argparse

from pipeline.config import read_config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a YAML config, e.g. config/default.yaml")


def run(args: argparse.Namespace) -> None:
    config = read_config(args.path)
    runs = len(config.pretraining.sizes) * len(config.pretraining.objectives)
    print(f"{args.path}: ok ({runs} pretraining runs, {len(config.finetuning.tasks)} tasks)")
