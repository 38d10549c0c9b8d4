"""What a configuration will cost on GPUs, before anything runs (``python -m pipeline cost`` prints
it: :mod:`pipeline.workflow.cost_printout`).

Three estimates, all from the config alone (no data, no GPU):

* **GPU-hours per stage**: one row per rule that declares a kind of GPU job (``@rule(..., gpu=...)``
  in :mod:`pipeline.workflow.rule_params`), summed over the plan's jobs of it, each costed by its
  kind's ``cost`` (:mod:`pipeline.workflow.job_resources`); pretraining one row per study.
  Training FLOPs are ``6 * N * tokens`` (forward 2, backward 4 FLOPs per parameter and token;
  Kaplan et al. 2020), with ``N`` the parameters that take
  part in matrix multiplies: every non-embedding parameter plus the LM head at the share of
  positions it runs on (an embedding lookup costs no FLOPs, the vocabulary projection does;
  under sparse prediction the head runs at the positions with a loss only, 40% of them for
  MLM at 40%). Attention scores are left out (at 2,048 tokens they add about 12 * layers *
  hidden * length per token, ~18% at 210M). GPU-hours are FLOPs / (peak x MFU), the MFU
  measured where a record exists (``bench/pretrain_throughput.py`` counts FLOPs the same
  way), ``hardware.assumed_mfu`` elsewhere. Fine-tuning counts the
  protocol's grid (tasks x models x ``FinetuningSpec.num_runs``): where the tasks are prepared
  (``--directory``), at the tokens a run of each computes, measured on its rows
  (:mod:`pipeline.finetune.lengths`: its steps, its batches padded as the sweep pads them, and
  scoring); elsewhere at ``max_steps`` full batches of ``max_length`` tokens, an upper bound
  (most examples are far shorter, and a small task stops after one epoch).
  Scoring the zero-shot minimal pairs trains nothing: its bound is every pair's sentences at their
  longest, forward only, and a quarter-hour a job to load.
* **Peak GPU memory per size**, for the pretraining runs of that size at their
  micro-batch, precision and sharding, checked against ``hardware.gpu_memory_gb``. It is an
  itemised estimate (weights, gradients and AdamW moments; bf16 weight copies; activations
  kept for the backward pass; the float32 logits of the loss), not a measurement: the GPU
  benchmark prints ``torch.cuda.max_memory_allocated`` to compare against it.
* **The data stage's CPU-hours and disk**, when ``corpus.expected_tokens`` is set: the
  tokens over the stage's rate per core, and the prepared text and packed tokens they fill,
  at the rates ``hardware`` holds (measured by ``bench/data_stage.py``).

The Snakemake workflow prints the same table when ``hardware.print_cost_estimate`` is set
(config/paper.yaml sets it), so ``snakemake -n --configfile config/paper.yaml`` shows it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, get_args

from pipeline.config import ComputeSpec, Config, MinimalPairsSpec, SizeSpec
from pipeline.kernels import KERNELS
from pipeline.objectives import parse_objective
from pipeline.pretrain.plan import RunPlan, Study
from pipeline.tokenization.pack import token_dtype
from pipeline.workflow.measured_mfu import measured_finetune_for, measured_for
from pipeline.workflow.targets import Job

if TYPE_CHECKING:
    from pipeline.finetune.run_tokens import RunTokens

GB = 1e9
CUDA_OVERHEAD_BYTES = 2 * GB  # CUDA context, cuBLAS/NCCL workspaces, allocator fragmentation
Plans = dict[str, RunPlan]  # pipeline.workflow.configure.Resolved.plans
Lengths = dict[str, "RunTokens"]  # task -> what one grid point of it computes, measured or from its record


@dataclass(frozen=True)
class Parameters:
    """Parameter counts of one backbone size (Llama/EuroBERT layout, untied embeddings, no biases)."""

    per_layer: int
    non_embedding: int  # transformer layers + final norm
    embedding: int  # input token embeddings
    lm_head: int

    @property
    def total(self) -> int:
        return self.non_embedding + self.embedding + self.lm_head

    @property
    def matmul(self) -> int:
        """Parameters used in matrix multiplies at every position: the ``N`` of ``6 * N * tokens``."""
        return self.non_embedding + self.lm_head

    def trained(self, head_share: float) -> float:
        """The ``N`` of ``6 * N * tokens`` when the LM head runs on ``head_share`` of the positions
        (sparse prediction: those with a loss, 0.4 of them for MLM at 40%)."""
        return self.non_embedding + self.lm_head * head_share


def parameters(size: SizeSpec, vocab_size: int) -> Parameters:
    hidden, head_dim = size.hidden_size, size.hidden_size // size.num_heads
    attention = 2 * hidden * hidden + 2 * hidden * size.num_kv_heads * head_dim  # q and o; k and v (grouped-query)
    mlp = 3 * hidden * size.ffn_size  # SwiGLU: gate, up, down
    per_layer = attention + mlp + 2 * hidden  # + two RMSNorm gains
    return Parameters(per_layer, size.num_layers * per_layer + hidden, vocab_size * hidden, vocab_size * hidden)


def training_flops(num_parameters: int, num_tokens: int) -> float:
    return 6.0 * num_parameters * num_tokens


# --------------------------------------------------------------------------- GPU-hours


@dataclass(frozen=True)
class StageCost:
    stage: str
    jobs: int  # Snakemake jobs
    runs: int  # training runs (a fine-tuning job trains its whole grid)
    tokens: float
    flops: float
    gpu_hours: float


def pretraining_tokens(plan: RunPlan, config: Config) -> int:
    spec = config.pretraining
    return (plan.last_step - plan.first_step) * spec.batch_size * spec.sequence_length


def pretraining_flops(config: Config, plan: RunPlan) -> float:
    """Training FLOPs of one run, its LM head counted at the positions it runs on (:func:`head_share`)."""
    counts = parameters(config.sizes[plan.size], config.tokenizer.vocab_size)
    return training_flops(counts.trained(head_share(config, plan)), pretraining_tokens(plan, config))


def head_share(config: Config, plan: RunPlan) -> float:
    """The share of a run's positions its LM head runs on: those with a loss under sparse
    prediction (MLM at 40%: 0.4), all without. ``bench/pretrain_throughput.py`` counts its MFU
    the same way, so a measured MFU turns back into the measured tokens per second: with the
    head at every position, MLM at 40% would be costed ~1.4x its measured time at 210M."""
    if not config.pretraining.compute.for_size(plan.size).sparse_prediction:
        return 1.0
    return loss_fraction(config, plan.objective)


def pretraining_mfu(config: Config, plan: RunPlan) -> float:
    """The MFU a run is costed at: measured on the config's GPU at its size and objective kind
    where a record exists (:mod:`pipeline.workflow.measured_mfu`), else ``hardware.assumed_mfu``."""
    measured = measured_for(config, plan)
    return measured.mfu if measured is not None else config.hardware.assumed_mfu


def pretraining_gpu_hours(config: Config, plan: RunPlan) -> float:
    """GPU-hours of one pretraining run at its MFU (:func:`pretraining_mfu`)."""
    return pretraining_flops(config, plan) / (config.hardware.gpu_peak_tflops * 1e12 * pretraining_mfu(config, plan)) / 3600


def pretraining_job_hours(config: Config, plan: RunPlan) -> float:
    """Wall hours of one GPU pretraining job on its ``hardware.gpus_per_run`` GPUs."""
    return pretraining_gpu_hours(config, plan) / max(config.hardware.gpus_per_run, 1)


# Retrieval trains with the cached contrastive loss (EncodEval's CachedMultipleNegativesRankingLoss,
# pipeline/finetune/task_types/retrieval.py): every pair embedded once without gradients, then again
# with them: a training token costs 6N + 2N.
CACHED_LOSS_FLOPS = 8.0 / 6.0


def run_flops(config: Config, task: str, size: str, measured: "RunTokens | None" = None) -> tuple[float, float]:
    """FLOPs of one grid point on ``task`` at config size ``size``, (training, scoring): its ``measured``
    tokens (its prepared rows', or its record's), trained (6N, retrieval's cached loss 8N) and scored
    (2N, forward only); without them ``max_steps`` of full-length examples, an upper bound, and no
    scoring (not counted)."""
    protocol = config.finetuning.for_task(task)
    matmul = parameters(config.sizes[size], config.tokenizer.vocab_size).non_embedding
    cached = CACHED_LOSS_FLOPS if config.tasks[task].type == "retrieval" else 1.0
    if measured is not None:
        return cached * training_flops(matmul, measured.train_tokens), 2.0 * matmul * measured.scored_tokens
    return cached * training_flops(matmul, protocol.max_steps * protocol.batch_size * config.tasks[task].max_length), 0.0


def grid_flops(config: Config, task: str, size: str, measured: "RunTokens | None" = None) -> float:
    """FLOPs of one model's whole grid on ``task`` at config size ``size`` (:func:`run_flops` per run)."""
    return config.finetuning.for_task(task).num_runs * sum(run_flops(config, task, size, measured))


def finetune_mfu(config: Config, task: str, size: str) -> float:
    """The MFU ``task``'s fine-tuning jobs at ``size`` are costed at: measured for its task type where a
    record exists (:func:`pipeline.workflow.measured_mfu.measured_finetune_mfu`), else ``hardware.assumed_finetune_mfu``."""
    measured = measured_finetune_for(config, task, size)
    return measured.mfu if measured is not None else config.hardware.assumed_finetune_mfu


def finetuning_job_hours(config: Config, task: str, size: str, measured: "RunTokens | None" = None) -> float:
    """Wall hours of one fine-tuning job (a model's grid on ``task``) on its one GPU: each run's
    ``measured`` tokens, or the cap (:func:`run_flops`), phase by phase where a record timed the phases
    apart (set-up, training and scoring MFU), else at the whole fine-tuning MFU (:func:`finetune_mfu`).
    Where no record measured the task type, every optimizer step adds the assumed fixed cost of its
    launches and AdamW (``hardware.assumed_finetune_step_seconds``); a record's MFU already holds it."""
    peak = config.hardware.gpu_peak_tflops * 1e12
    protocol = config.finetuning.for_task(task)
    found = measured_finetune_for(config, task, size)
    if found is not None and found.phases is not None:
        seconds = found.phases.seconds(*run_flops(config, task, size, measured), peak)
        return protocol.num_runs * seconds / 3600
    hours = grid_flops(config, task, size, measured) / (peak * finetune_mfu(config, task, size)) / 3600
    if found is None:
        steps = measured.steps if measured is not None else protocol.max_steps
        hours += protocol.num_runs * steps * config.hardware.assumed_finetune_step_seconds / 3600
    return hours


@dataclass(frozen=True)
class JobCost:
    """What one GPU job adds to the estimate. ``stage``: its row where that is not its rule's name
    (a pretraining job's is its study's), ``rank`` that row's place among its rule's rows."""

    runs: int  # training runs (a fine-tuning job trains its whole grid; scoring trains none)
    tokens: float  # tokens trained on (scored, for a job that trains nothing)
    flops: float
    gpu_hours: float
    stage: str | None = None
    rank: int = 0


class CostedRule(Protocol):
    """A GPU rule's declaration as the estimate reads it (``GpuJob`` of :mod:`pipeline.workflow.job_resources`)."""

    def cost(self, config: Config, plans: Plans, wildcards: Mapping[str, str], lengths: Lengths) -> JobCost | None: ...


def stage_costs(
    config: Config, plans: Plans, jobs: Iterable[Job], gpu_rules: Mapping[str, CostedRule], lengths: Lengths | None = None
) -> list[StageCost]:
    """GPU-hours of every GPU job of ``jobs`` (:func:`pipeline.workflow.targets.every_job`), one row per
    rule that declares a kind of GPU job (``gpu_rules``: :func:`pipeline.workflow.rule_params.gpu_jobs`,
    in registration order), pretraining one row per study; data preparation and tokenization run on
    CPUs. Fine-tuning is costed at the ``lengths`` measured for a task, the cap for any other."""
    order = {rule: index for index, rule in enumerate(gpu_rules)}
    rows: dict[str, tuple[tuple[int, int], list[JobCost]]] = {}
    for job in jobs:
        if job.rule not in gpu_rules:
            continue
        cost = gpu_rules[job.rule].cost(config, plans, job.wildcards, lengths or {})
        if cost is None:  # an outside model of no config size (the printout names those left out)
            continue
        rows.setdefault(cost.stage or job.rule, ((order[job.rule], cost.rank), []))[1].append(cost)
    return [
        StageCost(
            stage,
            len(costs),
            sum(c.runs for c in costs),
            sum(c.tokens for c in costs),
            sum(c.flops for c in costs),
            sum(c.gpu_hours for c in costs),
        )
        for stage, (_, costs) in sorted(rows.items(), key=lambda row: row[1][0])
    ]


def pretraining_job_cost(config: Config, plan: RunPlan) -> JobCost:
    """One pretraining run, in its study's row."""
    return JobCost(
        1,
        pretraining_tokens(plan, config),
        pretraining_flops(config, plan),
        pretraining_gpu_hours(config, plan),
        f"pretrain ({plan.study})",
        get_args(Study).index(plan.study),
    )


def finetuning_job_cost(config: Config, task: str, size: str | None, lengths: Lengths) -> JobCost | None:
    """One model's whole grid on ``task`` (a task scored on another's models is not a GPU job: it
    adds nothing, and scoring, every task's, is not counted in the tokens); None for an outside model
    of no config size."""
    if size is None:
        return None
    protocol, measured = config.finetuning.for_task(task), lengths.get(task)
    run_tokens = measured.train_tokens if measured else protocol.max_steps * protocol.batch_size * config.tasks[task].max_length
    grid = protocol.num_runs
    return JobCost(grid, grid * run_tokens, grid_flops(config, task, size, measured), finetuning_job_hours(config, task, size, measured))


# A minimal-pairs job's fixed part: loading the model and the pairs, moving them to the GPU.
MINIMAL_PAIRS_START_HOURS = 0.25
TOKENS_PER_WORD_BOUND = 3  # a sentence of at most max_words words is at most this many tokens per word


def minimal_pairs_tokens(spec: MinimalPairsSpec) -> int:
    """Tokens one model reads scoring every pair, an upper bound: both sentences of every pair at
    their longest, read with pseudo-log-likelihood (one pass per token) and sentence log-likelihood
    (one more)."""
    sentences = 2 * len(spec.kinds) * spec.max_pairs_per_kind
    tokens = spec.max_words * TOKENS_PER_WORD_BOUND + 2
    return sentences * (tokens + 1) * tokens


def minimal_pairs_hours(config: Config, spec: MinimalPairsSpec, size: str) -> float:
    """Wall hours of scoring every pair with a ``size`` model: forward only (a third of ``training_flops``)."""
    return (
        MINIMAL_PAIRS_START_HOURS
        + minimal_pairs_flops(config, spec, size) / (config.hardware.gpu_peak_tflops * 1e12 * config.hardware.assumed_finetune_mfu) / 3600
    )


def minimal_pairs_flops(config: Config, spec: MinimalPairsSpec, size: str) -> float:
    return training_flops(parameters(config.sizes[size], config.tokenizer.vocab_size).matmul, minimal_pairs_tokens(spec)) / 3


def minimal_pairs_job_cost(config: Config, size: str | None) -> JobCost | None:
    """One model scored on every minimal pair (trains nothing); None for an outside model of no config size."""
    spec = config.minimal_pairs
    if size is None or spec is None:
        return None
    # on one GPU, as a fine-tuning job (hardware.finetune_gpus is 0 or 1)
    return JobCost(0, minimal_pairs_tokens(spec), minimal_pairs_flops(config, spec, size), minimal_pairs_hours(config, spec, size))


# ------------------------------------------------------------------------ peak memory


@dataclass(frozen=True)
class MemoryEstimate:
    size: str
    num_parameters: int
    micro_batch_size: int
    sharding: str
    states_gb: float  # float32 weights, gradients, AdamW moments (+ bf16 copies)
    activations_gb: float
    logits_gb: float
    total_gb: float
    fits: bool


def activation_bytes_per_token_layer(size: SizeSpec, bf16: bool, compiled: bool = False) -> float:
    """Bytes one token keeps for the backward pass in one transformer layer.

    Eager: counted tensor by tensor for a Llama layer under autocast (the residual stream stays
    float32, matmul inputs and outputs are bf16), with SDPA flash attention, which stores
    no (length x length) matrix: the two RMSNorm inputs and outputs (4 x 4h, float32),
    their bf16 casts (2 x 2h), q/k before and after RoPE and v (2h + 4h_kv + 2h_kv),
    attention output and its projection input (2 x 2h), and SwiGLU's gate, up, SiLU(gate),
    product and down-projection input (5 x 2f). In float32 every bf16 tensor doubles.

    ``compiled`` (bf16 under torch.compile): inductor recomputes the pointwise work between the
    matmuls in the backward pass (the norms, RoPE, SiLU), keeping the two float32 residuals
    (2 x 4h), q, k, v after RoPE and the attention output (2h + 4h_kv + 2h), gate, up and their
    product (3 x 2f): 12h + 4h_kv + 6f. Against the H200's measured peaks
    (bench/records/gpu-speed-h200-2026-11-28) the whole estimate is within 10% at 210M, 610M and 1B.
    """
    h, f = size.hidden_size, size.ffn_size
    h_kv = size.num_kv_heads * (h // size.num_heads)
    if compiled and bf16:
        return 12 * h + 4 * h_kv + 6 * f
    low = 2 * h + 2 * h + 2 * h + 4 * h_kv + 2 * h_kv + 2 * h + 2 * h + 5 * 2 * f  # bf16 tensors, in bytes
    return 4 * 4 * h + (low if bf16 else 2 * low)


def peak_memory(config: Config, plans: Plans, size_name: str, world_size: int) -> MemoryEstimate:
    """Estimated peak memory of one GPU training ``size_name``, for its most memory-hungry objective."""
    spec = config.pretraining
    compute: ComputeSpec = spec.compute.for_size(size_name)
    size, vocab = config.sizes[size_name], config.tokenizer.vocab_size
    counts = parameters(size, vocab)
    shards = world_size if compute.sharding == "fsdp" and world_size > 1 else 1
    bf16 = compute.precision == "bf16"
    per_process = spec.batch_size // max(world_size, 1)
    micro = compute.micro_batch_size or per_process
    states = 16 * counts.total / shards  # float32 weight + gradient + two AdamW moments
    if bf16:  # bf16 copies of the weights the matmuls read: all of them, or (FSDP) the root and two gathered layers
        states += 2 * (counts.total if shards == 1 else counts.embedding + counts.lm_head + 2 * counts.per_layer)
    tokens = micro * spec.sequence_length
    # + the float32 embedding output, final norm input and output, outside the layers
    per_layer = activation_bytes_per_token_layer(size, bf16, compute.compile)
    activations = tokens * (size.num_layers * per_layer + 3 * 4 * size.hidden_size)
    # SDPA's dense split-sample mask: 3.2 GB at 210M, micro-batch 32, where the H200 measured 3.3 GB over
    # packed blocks (bench/records/gpu-speed-h200-2026-11-28b)
    activations += KERNELS[compute.attention].memory_bytes(size.num_layers, micro, spec.sequence_length, bf16, spec.samples == "split")
    fraction = max(loss_fractions(config, plans, size_name)) if compute.sparse_prediction else 1.0
    logits = KERNELS[compute.head].memory_bytes(tokens * fraction, vocab, size.hidden_size)
    total = states + activations + logits + CUDA_OVERHEAD_BYTES
    hardware = config.hardware
    return MemoryEstimate(
        size_name,
        counts.total,
        micro,
        compute.sharding if world_size > 1 else "single",
        states / GB,
        activations / GB,
        logits / GB,
        total / GB,
        total / GB <= hardware.gpu_memory_gb,
    )


def finetune_peak_memory(config: Config, size_name: str) -> MemoryEstimate:
    """Estimated peak memory of one GPU fine-tuning ``size_name``: weights, gradients and AdamW's
    moments in the fine-tuning precision (bf16_weights: 2 bytes each; else float32) and one
    micro-batch of the longest task's inputs at their cap (retrieval without micro-batches: a
    query and a document each; with them, one side at a time)."""
    spec, size = config.finetuning, config.sizes[size_name]
    counts = parameters(size, config.tokenizer.vocab_size)
    states = (8 if spec.precision == "bf16_weights" else 16) * counts.total
    micro = spec.micro_batch_size or spec.batch_size
    whole_pairs = micro >= spec.batch_size and any(config.tasks[task].type == "retrieval" for task in spec.tasks)
    texts = 2 if whole_pairs else 1
    tokens = texts * micro * max(config.tasks[task].max_length for task in spec.tasks)
    activations = tokens * (size.num_layers * activation_bytes_per_token_layer(size, spec.precision != "fp32") + 3 * 4 * size.hidden_size)
    total = states + activations + CUDA_OVERHEAD_BYTES
    fits = total / GB <= config.hardware.gpu_memory_gb
    return MemoryEstimate(size_name, counts.total, micro, "fine-tune", states / GB, activations / GB, 0.0, total / GB, fits)


def loss_fractions(config: Config, plans: Plans, size_name: str) -> list[float]:
    """The share of positions that carry loss, for every objective pretrained at ``size_name``."""
    return [loss_fraction(config, o) for o in sorted({p.objective for p in plans.values() if p.size == size_name})]


def loss_fraction(config: Config, objective: str) -> float:
    """The share of positions that carry loss under ``objective`` (a name of ``config.objectives``)."""
    return parse_objective(config.objectives[objective]).params.expected_loss_fraction(config.pretraining.sequence_length)


# ------------------------------------------------------------------------- data stage


@dataclass(frozen=True)
class DataStageCost:
    """The CPU data stage over ``corpus.expected_tokens``: one prepare_corpus and one pack job per shard."""

    num_shards: int
    tokens: float
    cpu_hours: float
    text_gb: float  # the prepared corpus: cleaned text as JSONL (the hub's files are streamed, not kept)
    tokens_gb: float  # the packed arrays
    token_bytes: int  # 2 (uint16) below 65,536 ids, else 4 (uint32)


def data_stage_cost(config: Config) -> DataStageCost | None:
    tokens = config.corpus.expected_tokens
    if tokens is None:
        return None
    hardware, token_bytes = config.hardware, token_dtype(config.tokenizer.vocab_size).itemsize
    return DataStageCost(
        num_shards=config.corpus.num_shards,
        tokens=tokens,
        cpu_hours=tokens / hardware.data_tokens_per_cpu_second / 3600,
        text_gb=tokens * hardware.data_text_bytes_per_token / GB,
        tokens_gb=tokens * token_bytes / GB,
        token_bytes=token_bytes,
    )


def over_memory(config: Config, plans: Plans) -> list[str]:
    """The sizes whose estimated peak memory exceeds the GPU's, pretraining or (``<size> fine-tuning``) fine-tuning."""
    world_size = max(config.hardware.gpus_per_run, 1)
    sizes = sorted({p.size for p in plans.values()})
    pretraining = [s for s in sizes if not peak_memory(config, plans, s, world_size).fits]
    return pretraining + [f"{s} fine-tuning" for s in sizes if not finetune_peak_memory(config, s).fits]
