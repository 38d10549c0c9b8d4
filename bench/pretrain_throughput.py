"""Side-by-side pretraining throughput: this project's trainer against the transformers ``Trainer``.

    # CPU, the embedded default's tiny preset (needs results/tokens and results/init/random-tiny):
    python bench/pretrain_throughput.py --tokens results/tokens --init results/init/random-tiny --threads 2
    # one GPU, the study's 210M preset at 2,048 tokens in bf16 (fresh weights, any packed tokens):
    python bench/pretrain_throughput.py --tokens results/tokens --tokenizer results/tokenizer --size 210m \\
        --device cuda --precision bf16 --compile --fused-optimizer --sequence-length 2048 --batch-size 16
    # the same with a larger batch in micro-batches (both trainers accumulate to the same step):
    ... --batch-size 32 --micro-batch-size 16

Both train the same backbone (the same initial weights, built by ``pipeline.model.backbone``)
on the same packed token blocks for a fixed number of steps, for CLM and for MLM (40%,
80/10/10), in one process, repetitions alternating between the two so both see the same
machine load. The ``Trainer`` is set up as a user of transformers' ``run_clm.py`` /
``run_mlm.py`` would: a dataset of fixed-length blocks, ``default_data_collator`` (CLM) or
``DataCollatorForLanguageModeling`` with the same masking (MLM), the same AdamW
hyper-parameters and batch size, ``bf16=True`` when ours runs in bf16, everything else at
its defaults (its default optimizer is fused AdamW; ``--trainer-compile`` adds
``torch_compile=True``, which ``run_clm.py`` users must ask for).

Throughput: tokens per second over the steps after ``--warmup`` (which absorb
``torch.compile`` and allocator warm-up), the device synchronised at both ends; evaluation
and checkpointing are off for both. MFU: model FLOPs per second over a matrix-multiply peak
measured in this run (the best of a few large matmuls in the benchmark's precision). Model
FLOPs per token are ``6 x (non-embedding parameters + LM head x share of positions that
carry loss)``: the head counts only where the objective needs it, so a dense MLM head's extra
work earns nothing; ``+attn`` adds PaLM's ``12 x layers x hidden x length`` for attention.
Printed: every measurement as it comes, then medians as a markdown table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import step_profile  # a sibling script
import torch
from alternation import in_turn  # a sibling script
from throughput_record import (  # a sibling script
    compare_losses,
    machine,
    process_age,
    read_baseline,
    report,
    summarize,
    trainer_micro_batch,
    wall_time_line,
    write_record,
)
from transformers import AutoTokenizer

from pipeline import strict
from pipeline.config import ComputeSpec, PretrainingSpec, ScheduleSpec, SizeSpec
from pipeline.kernels import DEFAULT_KERNELS, kernel_names
from pipeline.model.backbone import (
    WEIGHTS_FILE,
    BackboneSpec,
    build_language_model,
    compile_layers,
    load_language_model,
    read_backbone_spec,
    save_language_model,
)
from pipeline.objectives import parse_objective
from pipeline.pretrain.distributed import Processes
from pipeline.pretrain.plan import Start, planned_run
from pipeline.pretrain.token_blocks import TokenBlocks
from pipeline.pretrain.trainer import RunInputs, Trainer
from pipeline.provenance import write_provenance
from pipeline.tokenization.special_tokens import SpecialIds
from pipeline.workflow.configure import REPOSITORY, read_configs
from pipeline.workflow.cost import parameters

OBJECTIVES = {"clm": {"kind": "clm"}, "mlm": {"kind": "mlm", "mask_ratio": 0.4}}
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune-no-cudagraphs")
PEAK_LR = 5e-4


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def matmul_peak(device: torch.device, dtype: torch.dtype) -> float:
    """Best FLOP/s of square matmuls in ``dtype`` on ``device``: the peak MFU is measured against."""
    best = 0.0
    for n in (1024, 2048, 4096) if device.type == "cpu" else (4096, 8192):
        a, b = torch.randn(n, n, device=device, dtype=dtype), torch.randn(n, n, device=device, dtype=dtype)
        repeats = 3 if device.type == "cpu" else 20
        torch.matmul(a, b)
        synchronize(device)
        started = time.perf_counter()
        for _ in range(repeats):
            torch.matmul(a, b)
        synchronize(device)
        best = max(best, 2 * n**3 * repeats / (time.perf_counter() - started))
    return best


class TimedTrainer(Trainer):
    """Ours, timing the steps after the warm-up, keeping the last step's training loss; the
    end-of-run evaluation is skipped. With ``profile_steps``, a profiler watches that many last steps
    and ``profile`` holds where their time went (:mod:`step_profile`)."""

    warmup_steps = profile_steps = 0
    started = ended = profile_started = 0.0
    final_loss = float("nan")
    profile: dict | None = None

    def _train_step(self, step: int, measure: bool):
        if step == self.warmup_steps:
            self.processes.synchronize()
            self.started = time.perf_counter()
        if self.profile_steps and step == self.inputs.plan.last_step - self.profile_steps:
            self.processes.synchronize()
            self.profiler = step_profile.start(self.processes.device)
            self.profile_started = time.perf_counter()
        metrics = super()._train_step(step, measure)
        if metrics is not None:  # measured at least at the last step
            self.final_loss = metrics["loss"]
        return metrics

    def evaluate(self):
        self.ended = time.perf_counter()  # called right after the last step, the device already synchronised
        if self.profile_steps:
            self.profiler.stop()
            wall = self.ended - self.profile_started
            self.profile = step_profile.summarize(self.profiler, self.processes.device, wall, self.profile_steps)
        return None, None  # not measured


def compile_for_attempt(trainer: Trainer, scope: str, mode: str) -> None:
    """Compiles the trainer does not make itself: the whole trained module (backbone, head and
    loss) or the transformer layers in another mode (reduce-overhead: CUDA graphs)."""
    if scope == "model":
        trainer.trained.compile(mode=mode)
        return
    compile_layers(trainer.model, mode)


def attention_backends(choice: str):
    """``flash``: SDPA may use the flash kernel only, so a run that completes took it (for its
    masks, in its precision); one that cannot raises "No available kernel"."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.FLASH_ATTENTION]) if choice == "flash" else contextlib.nullcontext()


@contextlib.contextmanager
def liger_layers(model: torch.nn.Module, enabled: bool):
    """With ``enabled``: Liger Kernel's Triton RMSNorm, SwiGLU and RoPE in ``model``'s layers (Llama's and
    EuroBERT's have the same modules), the RMSNorm and MLP modules patched in place and the RoPE function
    swapped while the block runs (so the ``Trainer`` beside it keeps transformers' own)."""
    if not enabled:
        yield
        return
    from liger_kernel.transformers.monkey_patch import _patch_rms_norm_module, _patch_swiglu_module  # liger-kernel 0.8.5
    from liger_kernel.transformers.rope import liger_rotary_pos_emb
    from liger_kernel.transformers.swiglu import LigerSwiGLUMLP
    from transformers.models.eurobert import modeling_eurobert
    from transformers.models.llama import modeling_llama

    for module in model.modules():
        if type(module).__name__.endswith("RMSNorm"):
            _patch_rms_norm_module(module, eps=module.variance_epsilon)
        elif type(module).__name__.endswith("MLP"):
            _patch_swiglu_module(module, LigerSwiGLUMLP)
    modules = (modeling_llama, modeling_eurobert)
    originals = [module.apply_rotary_pos_emb for module in modules]
    for module in modules:
        module.apply_rotary_pos_emb = liger_rotary_pos_emb
    try:
        yield
    finally:
        for module, original in zip(modules, originals):
            module.apply_rotary_pos_emb = original


class Bench:
    def __init__(self, args: argparse.Namespace, init_dir: Path, special: SpecialIds, tokenizer):
        self.args, self.init_dir, self.special, self.tokenizer = args, init_dir, special, tokenizer
        self.device = torch.device("cuda", 0) if args.device == "cuda" else torch.device("cpu")
        self.backbone = read_backbone_spec(init_dir)
        self.total_steps = args.warmup + args.steps
        self.blocks = TokenBlocks(args.tokens, "train", args.sequence_length, seed=0)
        self.tokens_per_step = args.batch_size * args.sequence_length

    def ours(self, kind: str, samples: str | None = None) -> tuple[float, float, float]:
        """Tokens/s, peak GB and last-step loss of this project's trainer on ``samples`` (--samples by default)."""
        trainer = self.run_ours(kind, samples or self.args.samples, profile_steps=0)
        return self.tokens_per_step * self.args.steps / (trainer.ended - trainer.started), self.peak_memory(), trainer.final_loss

    def profile(self, kind: str) -> dict:
        """Where the time of --profile last steps goes in one more run of this project's trainer (:mod:`step_profile`)."""
        return self.run_ours(kind, self.args.samples, profile_steps=self.args.profile).profile

    def run_ours(self, kind: str, samples: str, profile_steps: int) -> TimedTrainer:
        """One run of this project's trainer on ``samples``, as the attempt's options say, its last
        ``profile_steps`` profiled."""
        args = self.args
        objective = parse_objective(OBJECTIVES[kind])
        schedule = ScheduleSpec(kind="wsd", peak_lr=PEAK_LR, num_warmup_steps=1, num_decay_steps=1)
        trainer_compiles = args.compile and args.compile_scope == "layers" and args.compile_mode == "default"  # the pipeline's own
        compute = ComputeSpec(
            micro_batch_size=args.micro_batch_size,
            precision=args.precision,
            compile=trainer_compiles,
            fused_optimizer=args.fused_optimizer,
            sparse_prediction=not args.dense_lm_head,
            lm_head=args.lm_head,
            attention=args.attention,
        )
        spec = PretrainingSpec(
            sizes=("bench",),
            objectives=(kind,),
            sequence_length=args.sequence_length,
            batch_size=args.batch_size,
            budget_steps=self.total_steps,
            resume_every_steps=10**9,
            num_heldout_batches=0,
            schedule=schedule,
            compute=compute,
            samples=samples,
        )
        plan = planned_run(kind, "bench", kind, "objectives", "benchmark", Start("initial"), (0, self.total_steps), schedule)
        inputs = RunInputs(self.backbone, self.special, objective, spec, plan, 0, self.blocks, [], "bench", "bench")
        model = load_language_model(self.init_dir, objective.attention)
        with tempfile.TemporaryDirectory() as work_dir, liger_layers(model, args.liger_layers):
            trainer = TimedTrainer(model, inputs, Path(work_dir), Processes(0, 1, self.device))
            trainer.warmup_steps, trainer.profile_steps = args.warmup, profile_steps
            if args.compile and not trainer_compiles:
                compile_for_attempt(trainer, args.compile_scope, args.compile_mode)
            with attention_backends(args.sdpa_backend):
                trainer.train()
        return trainer

    def trainer(self, kind: str) -> tuple[float, float, float]:
        """The ``Trainer``'s tokens/s and peak memory; its loss is not comparable (its own sampler and masking): NaN."""
        from transformers import DataCollatorForLanguageModeling, Trainer, TrainerCallback, TrainingArguments, default_data_collator

        args, device = self.args, self.device
        rows = [b.astype(np.int64).tolist() for step in range(self.total_steps) for b in self.blocks.blocks_for_step(step, args.batch_size)]
        # A list of feature dicts is all the Trainer's sampler and collators need (no `datasets`: GPU machines may lack it)
        if kind == "clm":  # run_clm.py: group_texts() copies input_ids to labels; the model shifts them
            dataset, collator = [{"input_ids": row, "labels": row} for row in rows], default_data_collator
        else:  # run_mlm.py: tokenised with return_special_tokens_mask=True, masked on the fly by the collator
            specials = [(np.asarray(r) < self.special.num_special).astype(np.int64).tolist() for r in rows]
            dataset = [{"input_ids": row, "special_tokens_mask": mask} for row, mask in zip(rows, specials)]
            collator = DataCollatorForLanguageModeling(self.tokenizer, mlm_probability=OBJECTIVES["mlm"]["mask_ratio"])
        model = load_language_model(self.init_dir, parse_objective(OBJECTIVES[kind]).attention)
        times: dict[str, float] = {}

        class Timer(TrainerCallback):
            def on_step_begin(self, _args, state, control, **kwargs):
                if state.global_step == args.warmup:
                    synchronize(device)
                    times["started"] = time.perf_counter()

            def on_step_end(self, _args, state, control, **kwargs):
                if state.global_step == args.warmup + args.steps:
                    synchronize(device)
                    times["ended"] = time.perf_counter()

        with tempfile.TemporaryDirectory() as out:
            training = TrainingArguments(
                output_dir=out,
                # its micro-batches (ours by default), accumulated to the same optimizer step
                per_device_train_batch_size=trainer_micro_batch(args),
                gradient_accumulation_steps=args.batch_size // trainer_micro_batch(args),
                max_steps=self.total_steps,
                learning_rate=PEAK_LR,
                weight_decay=0.1,
                adam_beta1=0.9,
                adam_beta2=0.95,
                adam_epsilon=1e-5,
                max_grad_norm=1.0,
                lr_scheduler_type="linear",
                logging_steps=10,
                save_strategy="no",
                report_to="none",
                seed=0,
                disable_tqdm=True,
                use_cpu=device.type == "cpu",
                bf16=args.precision == "bf16",
                torch_compile=args.trainer_compile,
            )
            Trainer(model=model, args=training, train_dataset=dataset, data_collator=collator, callbacks=[Timer()]).train()
        return self.tokens_per_step * args.steps / (times["ended"] - times["started"]), self.peak_memory(), float("nan")

    def peak_memory(self) -> float:
        """GB allocated at the peak since the last call (CUDA only; NaN on CPU)."""
        if self.device.type != "cuda":
            return float("nan")
        peak = torch.cuda.max_memory_allocated(self.device) / 1e9
        torch.cuda.reset_peak_memory_stats(self.device)
        return peak

    def model_flops_per_token(self, kind: str) -> tuple[float, float]:
        """(6N with the LM head on loss positions, the same + attention scores) per trained token."""
        size, length = self.backbone.size, self.args.sequence_length
        counts = parameters(size, self.backbone.vocab_size)
        loss_share = parse_objective(OBJECTIVES[kind]).params.expected_loss_fraction(length)
        dense = 6 * counts.trained(loss_share)
        return dense, dense + 12 * size.num_layers * size.hidden_size * length


def prepare_init(args: argparse.Namespace, tokenizer, special: SpecialIds, directory: Path, cache: str | None = None) -> Path:
    """``--init`` as given, or fresh weights of paper size ``--size`` (vocabulary ``--vocab-size``) in ``directory``;
    with a ``cache`` folder (``--init-cache``), in its entry for the model instead, built by the first run that needs it
    and read by every later one (one seed: the same weights either way, so the attempts' losses still compare)."""
    if args.init:
        return Path(args.init)
    sizes = read_configs([str(REPOSITORY / "config" / "paper.yaml")])["sizes"]  # the paper's sizes and the default's
    size = strict.parse(SizeSpec, sizes[args.size], f"sizes.{args.size}")
    spec = BackboneSpec(size, args.vocab_size, args.sequence_length, special.pad, special.bos, special.eos, special.mask)
    if cache:
        directory = Path(cache) / f"{args.size}-vocab{args.vocab_size}-length{args.sequence_length}"
        if (directory / "provenance.json").is_file() and read_backbone_spec(directory) == spec:
            return directory
    # written aside and moved into place whole, so a run stopped at its time limit leaves no half-written entry
    partial = directory.with_name(directory.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    save_language_model(build_language_model(spec, "causal", seed=0), spec, partial)
    write_provenance(partial, {"size": args.size, "vocab_size": args.vocab_size}, {}, outputs=[partial / WEIGHTS_FILE])
    shutil.rmtree(directory, ignore_errors=True)  # an entry of other special tokens
    partial.rename(directory)
    return directory


def arguments() -> argparse.Namespace:
    """The command line, a setting no job may run or two that contradict each other refused in one line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", required=True, help="packed token directory (results/tokens)")
    parser.add_argument("--init", help="initial weights + tokenizer (results/init/random-tiny); or --size")
    parser.add_argument("--size", help="a size of config/paper.yaml or default.yaml, built fresh (210m, 610m, 1b; tiny)")
    parser.add_argument("--tokenizer", help="tokenizer directory (default: --init)")
    parser.add_argument("--init-cache", help="with --size: keep the fresh weights here for the next run of that size (one seed)")
    parser.add_argument("--vocab-size", type=int, default=128256, help="model vocabulary with --size (the study's)")
    parser.add_argument("--objectives", nargs="+", default=["clm", "mlm"], choices=sorted(OBJECTIVES))
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--micro-batch-size", type=int, help="sequences per forward pass, both trainers (default: the whole batch)")
    parser.add_argument(
        "--trainer-micro-batch-size", type=int, help="the Trainer's own micro-batch (its fastest that fits; default: --micro-batch-size)"
    )
    parser.add_argument("--steps", type=int, default=20, help="timed steps per measurement")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps before them")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    parser.add_argument("--compile", action="store_true", help="ours: torch.compile the transformer layers")
    parser.add_argument("--fused-optimizer", action="store_true", help="ours: fused AdamW")
    parser.add_argument("--dense-lm-head", action="store_true", help="ours: LM head on every position (no sparse prediction)")
    parser.add_argument("--trainer-compile", action="store_true", help="the Trainer too: torch_compile=True")
    parser.add_argument("--no-trainer", action="store_true", help="ours alone (an attempt measured against a baseline run)")
    parser.add_argument("--compile-scope", choices=("layers", "model"), default="layers", help="with --compile: what is compiled")
    parser.add_argument("--compile-mode", choices=COMPILE_MODES, default="default", help="with --compile (reduce-overhead: CUDA graphs)")
    parser.add_argument(
        "--lm-head",
        choices=kernel_names("lm_head", sparse_only=True),
        default=DEFAULT_KERNELS["lm_head"],
        help="ours: the sparse head + loss",
    )
    parser.add_argument("--liger-layers", action="store_true", help="ours: Liger Kernel's RMSNorm, SwiGLU and RoPE in the layers")
    parser.add_argument(
        "--attention",
        choices=kernel_names("attention"),
        default=DEFAULT_KERNELS["attention"],
        help="ours: the kernel (pretraining.compute.attention; pipeline/kernels/ says which need a GPU)",
    )
    parser.add_argument("--sdpa-backend", choices=("any", "flash"), default="any", help="flash: only the flash kernel (fails if not taken)")
    parser.add_argument(
        "--samples", choices=("packed", "split"), default="packed", help="ours: split: the study's cut samples, as config/paper.yaml trains"
    )
    parser.add_argument(
        "--profile", type=int, default=0, metavar="STEPS", help="ours once more an objective, its last STEPS steps profiled"
    )
    parser.add_argument("--json", help="write every measurement here")
    parser.add_argument("--compare-losses", metavar="JSON", help="another run's --json: its last-step training losses against ours")
    parser.add_argument("--loss-tolerance", type=float, default=0.02, help="largest loss difference taken as rounding (bf16 noise)")
    args = parser.parse_args()
    kernels = ComputeSpec(
        precision=args.precision, attention=args.attention, lm_head=args.lm_head, sparse_prediction=not args.dense_lm_head
    )
    refusal = kernels.kernel_refusal(on_gpu=args.device == "cuda", gpu_is="--device cuda")
    if refusal:
        parser.error(f"--{refusal[0].replace('_', '-')}: {refusal[1]}")
    if not 0 <= args.profile <= args.steps:
        parser.error(f"--profile {args.profile}: give a number of the timed steps (0 to --steps {args.steps})")
    if bool(args.init) == bool(args.size):
        parser.error("give exactly one of --init and --size")
    # ours takes a shorter last micro-batch (a job's 144 rows a GPU in micro-batches of 32); the Trainer accumulates equal ones
    if not args.no_trainer and args.batch_size % trainer_micro_batch(args):
        parser.error(f"the Trainer's micro-batch {trainer_micro_batch(args)} must divide --batch-size {args.batch_size}")
    return args


def main() -> None:
    args = arguments()
    baseline = read_baseline(args.compare_losses, args) if args.compare_losses else None
    datasheet = read_configs([str(REPOSITORY / "config" / "paper.yaml")])["hardware"]["gpu_peak_tflops"] * 1e12
    torch.set_num_threads(args.threads)
    if args.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer or args.init)
    special = SpecialIds.from_tokenizer(tokenizer)
    with tempfile.TemporaryDirectory() as scratch:
        bench = Bench(args, prepare_init(args, tokenizer, special, Path(scratch) / "init", args.init_cache), special, tokenizer)
        dtype = torch.bfloat16 if args.precision == "bf16" else torch.float32
        peak = matmul_peak(bench.device, dtype)
        print(f"machine: {machine()}\nmatmul peak ({args.precision}): {peak / 1e12:.3f} TFLOP/s", flush=True)
        wall = {"ready": process_age()}  # imports, tokenizer, initial weights, token blocks, the peak: before any run
        who_runs = ("ours",) if args.no_trainer else ("ours", "trainer")
        results = {kind: {who: [] for who in who_runs} for kind in args.objectives}
        for repeat in range(args.repeats):
            for kind in args.objectives:
                for who in in_turn(who_runs, repeat):
                    began = time.perf_counter()
                    tokens_per_second, memory, final_loss = getattr(bench, who)(kind)
                    run = {"tokens_per_second": tokens_per_second, "peak_memory_gb": memory, "final_loss": final_loss}
                    results[kind][who].append(run | {"run_seconds": time.perf_counter() - began})  # all of it: load, compile, warm-up
                    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
                    print(
                        f"repeat {repeat} {kind} {who:8s} {tokens_per_second:12,.0f} tokens/s  peak memory {memory:.1f} GB"
                        f"  final loss {final_loss:.4f}  load {load}",
                        flush=True,
                    )
                    # after each measurement, so that a run stopped at its time limit keeps what it measured
                    write_record(
                        args, results, summarize(bench.model_flops_per_token, results, peak, datasheet), peak, datasheet, complete=False
                    )
        profiles = {}  # after the measurements, so that the profiler's own cost never reaches a tokens/s
        for kind in args.objectives if args.profile else ():
            began = time.perf_counter()
            try:
                profiles[kind] = bench.profile(kind) | {"run_seconds": time.perf_counter() - began}
            except Exception as error:  # a diagnosis that fails (a profiler of another torch) leaves the measurements standing
                profiles[kind] = {"error": f"{type(error).__name__}: {error}"}
                print(f"profile of {kind} failed: {profiles[kind]['error']}", flush=True)
            write_record(
                args,
                results,
                summarize(bench.model_flops_per_token, results, peak, datasheet),
                peak,
                datasheet,
                complete=False,
                profiles=profiles,
            )
        peak_after = matmul_peak(bench.device, dtype)
        print(f"matmul peak again after the runs: {peak_after / 1e12:.3f} TFLOP/s (load drift check)")
        summary = summarize(bench.model_flops_per_token, results, max(peak, peak_after), datasheet)
        if baseline is not None:
            compare_losses(summary, baseline, args)
        print(report(args, summary, max(peak, peak_after), datasheet))
        if profiles:
            measured = "the GPU's kernel time" if bench.device.type == "cuda" else "the CPU operators' own time"
            print(f"\nWhere a timed step's time goes (one profiled run an objective; shares of {measured}):\n")
            print(step_profile.table(profiles))
    wall["total"] = process_age()
    print(wall_time_line(wall, results, profiles))
    write_record(args, results, summary, max(peak, peak_after), datasheet, complete=True, profiles=profiles, wall=wall)


if __name__ == "__main__":
    main()
