"""``python -m pipeline finetune-evaluated``: the scores of a task that fine-tunes nothing of
its own (``TaskSpec.trained_with``) written out of the job that trained its models.

The study fine-tunes IR once, on MS MARCO's pairs, and scores each of those models on
msmarco, nq and mldr_en. Here the trainer's fine-tuning job scores every grid point's model
on every task trained with it (:mod:`pipeline.finetune.run`) and keeps their records under
``evaluated`` in its ``scores.json``; this stage writes one of them as the task's own
``scores.json``, so that every reader finds each task where it finds any other. It costs
a file copy: nothing is trained or scored twice.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.errors import PipelineError
from pipeline.files import atomic_path, read_json, write_json
from pipeline.integrity import verify_recorded
from pipeline.provenance import write_provenance

SCORES_FILE = "scores.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trained", required=True, type=Path, help="the trainer's fine-tuning output (its scores.json's folder)")
    parser.add_argument("--task", required=True, help="the task trained with it")
    parser.add_argument("--out", required=True, type=Path, help="the task's output folder, as a fine-tuning job's")


def run(args: argparse.Namespace) -> None:
    source = args.trained / SCORES_FILE
    verify_recorded(source)
    evaluated = read_json(source).get("evaluated", {})
    if args.task not in evaluated:
        raise PipelineError(f"{source}: key 'evaluated' has no {args.task!r} (scored there: {', '.join(sorted(evaluated)) or 'none'})")
    with atomic_path(args.out) as out:
        out.mkdir()
        write_json(out / SCORES_FILE, evaluated[args.task])
        write_provenance(out, {"task": args.task, "trained": str(args.trained)}, {"trained": source}, outputs=[out / SCORES_FILE])
