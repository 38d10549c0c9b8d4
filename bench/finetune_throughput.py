"""Fine-tuning throughput and MFU of the real ``finetune`` job, task by task, for the cost estimate.

    # one GPU, the paper's protocol at 210M (fresh weights, vocabulary 128,256) on the embedded
    # stand-ins of SST-2, CoNLL, SQuAD (both QA heads) and MS MARCO (results/ from the smoke config, see below):
    python bench/finetune_throughput.py --inputs results --size 210m --device cuda --json OUT/finetune-210m.json
    # the plumbing on a CPU (the default's tiny weights, float32):
    python bench/finetune_throughput.py --inputs results --init results/init/random-tiny --precision fp32 --steps 8

Each task runs as a pipeline job runs it (``python -m pipeline finetune``,
:func:`pipeline.finetune.run.command_line`) under config/paper.yaml's fine-tuning protocol (batch 32 in
micro-batches of 8, the study's pure-bf16 weights, random batches) cut to ``--steps`` steps, one learning rate
and ``--points`` seeds. A grid point's ``seconds`` in the job's scores.json (its training and its scoring of
validation and test) is what is timed, and its phases (``phases``: set-up, training, scoring, each with the
device synchronised); the first point is the warm-up (CUDA context, kernels' first launches) and the median of
the others is reported. Its FLOPs are counted as :func:`pipeline.workflow.cost.grid_flops` counts a point: 6 x
non-embedding parameters per padded training token of the batches that seed draws, 2 x per scored token
(:mod:`pipeline.finetune.lengths`). So MFU = FLOPs / seconds / datasheet peak turns back into the measured
time under the estimate, which takes it per task type in place of ``hardware.assumed_finetune_mfu``
(:func:`pipeline.workflow.measured_mfu.measured_finetune_mfu`). Each phase is also recorded apart (set-up
seconds, training MFU over the steps' seconds, scoring MFU over the scoring's), so the estimate times a point
of the jobs' thousand steps as set-up + steps + scoring rather than at the whole short point's MFU, in which
the set-up and scoring weigh far more.

The stand-ins are this project's embedded tasks of the study's four families (sentiment: short reviews;
proper_nouns: news sentences; news_qa: a question over a news passage, fine-tuned as extractive QA and,
as ``news_qa_tagged``, as the token tagging the paper runs its QA sets with; title_search: titles against
articles), at ``--max-length`` (2,028, the study's), so each keeps its own length mix; the record
says each task's mean padded length beside its MFU, since short tasks use a GPU least well.
Inputs: ``snakemake --cores 2 --configfile config/smoke.yaml results/tokenizer results/data/tasks/<task>/stats.json ...``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from pretrain_throughput import prepare_init  # a sibling script
from throughput_record import machine, run_identity  # a sibling script

from pipeline.finetune.lengths import scored_tokens, task_encoder, train_tokens
from pipeline.finetune.run import command_line
from pipeline.model.backbone import read_backbone_spec
from pipeline.tokenization.saved import load_saved_tokenizer
from pipeline.tokenization.special_tokens import SpecialIds
from pipeline.workflow import jobs
from pipeline.workflow.configure import REPOSITORY, merge, read_configs, read_task_files, resolve
from pipeline.workflow.cost import parameters, training_flops

STAND_INS = ("sentiment", "proper_nouns", "news_qa", "news_qa_tagged", "title_search")  # SST-2, CoNLL, SQuAD x 2, MS MARCO
# Stand-ins that fine-tune a prepared task's rows as another task type: the paper runs its QA sets (SQuAD,
# SQuAD v2, ReCoRD) as EncodEval's token tagging, the embedded news_qa as extractive QA; the same rows
# tagged give the paper's type a measurement (no also_metrics: a tagging head predicts no answer text).
RETYPED = {"news_qa_tagged": ("news_qa", "qa_token_tagging")}
PAPER = REPOSITORY / "config" / "paper.yaml"
# A task's figures: medians over its timed points (those after the warm-up point)
MEDIANS = ("tokens_per_second", "mfu_datasheet", "set_up_seconds", "training_mfu", "scoring_mfu")
PHASES = ("set_up", "training", "scoring")  # of a grid point, in the order they run (pipeline.finetune.grid_result)


def bench_config(args: argparse.Namespace):
    """config/paper.yaml with the stand-in tasks at ``--max-length`` as its only fine-tuning tasks, cut to
    ``--steps`` steps of one learning rate and ``--points`` seeds (and ``--precision`` if given), its layers
    compiled with ``--compile``."""
    tasks = read_task_files("config/tasks", "config")
    for name, (source, task_type) in RETYPED.items():
        tasks[name] = {**tasks[source], "type": task_type, "also_metrics": []}
    budget = {"max_steps": args.steps, "learning_rates": [args.learning_rate], "seeds": list(range(args.points))}
    paper = read_configs([str(PAPER)])
    by_task = paper["finetuning"].get("by_task") or {}  # a retyped stand-in takes its source's (one family, one curves choice)
    overlay = {
        "tasks": {name: {**tasks[name], "max_length": args.max_length, "trained_with": None} for name in args.tasks},
        "finetuning": {
            "tasks": list(args.tasks),
            **budget,
            "selection_seeds": None,
            # over what a config under paper.yaml budgets a task (the default's title_search: 25 steps)
            "by_task": {name: {**by_task.get(source_of(name), {}), **budget} for name in args.tasks},
            **({"precision": args.precision} if args.precision else {}),
            "compile": args.compile,
        },
    }
    return resolve(merge(paper, overlay)).config


def source_of(task: str) -> str:
    """The prepared task whose rows ``task`` fine-tunes: itself, or a retyped stand-in's source."""
    return RETYPED.get(task, (task, None))[0]


def measure_task(args: argparse.Namespace, config, task: str, model_dir: Path, work: Path, matmul: int, datasheet: float) -> dict:
    """One task's job run on ``--device``; each grid point's seconds, FLOPs and MFU, and their medians after the first."""
    task_dir = args.inputs / "data" / "tasks" / source_of(task)
    out, log = work / task, work / f"{task}.log"
    spec = jobs.finetune_spec(config, task, "bench", "bench", "random", None)
    command = command_line(spec, model_dir, task_dir, out, "--device", args.device, "--threads", str(args.threads))
    with log.open("w") as stream:
        done = subprocess.run(command, stdout=stream, stderr=subprocess.STDOUT, cwd=REPOSITORY, check=False)
    if done.returncode != 0:
        lines = log.read_text().strip().splitlines() or ["(no output)"]
        raise SystemExit(f"error: the finetune job on {task} failed (exit {done.returncode}): {lines[-1]}")
    grid = json.loads((out / "scores.json").read_text())["grid"]
    protocol = config.finetuning.for_task(task)
    encoder, rows, documents = task_encoder(task, config.tasks, {task: task_dir}, load_saved_tokenizer(model_dir), protocol)
    examples = encoder.encode(rows["train"])
    scored = scored_tokens(encoder, rows, documents)
    points = []
    for point in grid:
        steps = point["trained_steps"]
        trained = train_tokens(examples, steps, protocol, point["seed"])  # the batches this seed's point drew
        training, scoring = training_flops(matmul, trained), 2.0 * matmul * scored
        seconds, phases = point["seconds"], point["phases"]
        points.append(
            {
                "seed": point["seed"],
                "seconds": seconds,
                "phases": phases,
                "train_tokens": trained,
                "scored_tokens": scored,
                "tokens_per_second": (trained + scored) / seconds,
                "mfu_datasheet": (training + scoring) / seconds / datasheet,
                # each phase apart, so that the estimate times a point of any length: set-up once, steps, scoring
                "set_up_seconds": phases["set_up"],
                "training_mfu": training / phases["training"] / datasheet,
                "scoring_mfu": scoring / phases["scoring"] / datasheet,
            }
        )
        row = points[-1]
        print(
            f"{task} seed {row['seed']}: {seconds:.2f} s ({', '.join(f'{name} {phases[name]:.2f}' for name in PHASES)}),"
            f" {row['tokens_per_second']:,.0f} tokens/s, MFU {row['mfu_datasheet']:.1%} (training {row['training_mfu']:.1%},"
            f" scoring {row['scoring_mfu']:.1%})"
        )
    timed = points[1:] or points  # the first point pays the device's warm-up
    return {
        "type": config.tasks[task].type,
        "steps": steps,
        "mean_padded_length": statistics.mean(p["train_tokens"] for p in points) / (steps * protocol.batch_size),
        "points": points,
        **{key: statistics.median(p[key] for p in timed) for key in MEDIANS},
    }


def fresh_model(args: argparse.Namespace, directory: Path) -> Path:
    """Fresh weights of paper size ``--size`` in ``directory``, with --inputs' tokenizer beside them, as a job reads a model."""
    tokenizer = load_saved_tokenizer(args.inputs / "tokenizer")
    args.sequence_length = args.max_length + 20  # room for the longest input and its special tokens
    prepare_init(args, tokenizer, SpecialIds.from_tokenizer(tokenizer), directory)
    tokenizer.save_pretrained(directory)
    return directory


def report(args: argparse.Namespace, config, measured: dict) -> str:
    protocol = config.finetuning
    lines = [
        f"\n{machine()}; {args.size or args.init}; {protocol.precision}, batch {protocol.batch_size} in micro-batches of"
        f" {protocol.micro_batch_size}, {'grouped' if protocol.group_by_length else 'random'} batches,"
        f" {'compiled' if protocol.compile else 'eager'} layers; medians of"
        f" {max(args.points - 1, 1)} grid point(s) of {args.steps} steps after a warm-up point",
        "MFU = non-embedding parameters x (6 x padded training tokens + 2 x scored tokens) / seconds / datasheet peak;",
        "training MFU: 6 x padded training tokens over the steps' seconds; scoring MFU: 2 x scored tokens over the scoring's",
        "",
        "| task | type | steps | mean padded length | tokens/s | MFU, datasheet | set-up s | training MFU | scoring MFU |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for task, row in measured.items():
        lines.append(
            f"| {task} | {row['type']} | {row['steps']} | {row['mean_padded_length']:.0f} | {row['tokens_per_second']:,.0f}"
            f" | {row['mfu_datasheet']:.1%} | {row['set_up_seconds']:.2f} | {row['training_mfu']:.1%} | {row['scoring_mfu']:.1%} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=Path, required=True, help="results/ holding data/tasks/<task> (and tokenizer/ with --size)")
    parser.add_argument("--tasks", nargs="+", default=list(STAND_INS), help="embedded tasks (config/tasks) prepared in --inputs")
    parser.add_argument("--init", help="initial weights + tokenizer (results/init/random-tiny); or --size")
    parser.add_argument("--size", help="a size of config/paper.yaml (210m, 610m, 1b), built fresh")
    parser.add_argument("--vocab-size", type=int, default=128256, help="model vocabulary with --size (the study's)")
    parser.add_argument("--max-length", type=int, default=2028, help="every task's max_length (the study's: 0.99 x 2,048)")
    parser.add_argument("--steps", type=int, default=60, help="training steps per grid point")
    parser.add_argument("--points", type=int, default=3, help="grid points (seeds) per task; the first is the warm-up")
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument("--precision", choices=("fp32", "bf16", "bf16_weights"), help="default: config/paper.yaml's (bf16_weights)")
    parser.add_argument("--compile", action="store_true", help="finetuning.compile: the transformer layers torch.compile'd")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", help="write the record here")
    args = parser.parse_args()
    if bool(args.init) == bool(args.size):
        parser.error("give exactly one of --init and --size")
    if args.points < 1 or args.steps < 1:
        parser.error("--points and --steps must be at least 1")
    config = bench_config(args)
    datasheet = config.hardware.gpu_peak_tflops * 1e12
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        model_dir = Path(args.init) if args.init else fresh_model(args, work / "init")
        backbone = read_backbone_spec(model_dir)
        matmul = parameters(backbone.size, backbone.vocab_size).non_embedding  # as the estimate counts a grid point
        print(f"machine: {machine()}", flush=True)
        measured = {}
        for task in args.tasks:
            measured[task] = measure_task(args, config, task, model_dir, work, matmul, datasheet)
            # after each task, so that a run stopped at its time limit keeps the tasks it measured
            write_record(args, config, datasheet, measured, complete=len(measured) == len(args.tasks))
    print(report(args, config, measured))


def write_record(args: argparse.Namespace, config, datasheet: float, measured: dict, complete: bool) -> None:
    """The ``--json`` record of the tasks ``measured`` so far (``complete`` once every task is)."""
    if not args.json:
        return
    record = {
        "bench": "finetune_throughput",
        "args": {key: str(value) if isinstance(value, Path) else value for key, value in vars(args).items()},
        "command": sys.argv,
        **run_identity(),  # the code version and the machine, read once
        "complete": complete,
        "datasheet_peak_flops": datasheet,
        "protocol": {
            "precision": config.finetuning.precision,
            "batch_size": config.finetuning.batch_size,
            "micro_batch_size": config.finetuning.micro_batch_size,
            "group_by_length": config.finetuning.group_by_length,
            "compile": config.finetuning.compile,
        },
        "tasks": measured,
    }
    Path(args.json).write_text(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
