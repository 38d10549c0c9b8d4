"""Small fake result trees for the report tests, written as the other stages would.

Scores follow a transparent formula (task base + objective bonus + size bonus − an LR
penalty + a per-seed offset), so each test can say which numbers it expects and can
override the formula to build a specific case. Learning-curve checkpoints score the
same formula less a lag that shrinks linearly to zero at the end of the budget.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from pipeline import strict
from pipeline.finetune.selection import best_on_validation
from pipeline.objectives import parse_objective
from pipeline.result_kinds import write_manifest

ScoreFunction = Callable[[str, str, str, float, int], tuple[float, float]]  # (task, run name, size, LR, seed) -> (validation, test)
CurveFunction = Callable[..., tuple[float, float]]  # ScoreFunction's arguments, then fraction= of the budget trained

NUM_STEPS = 600
CPT_STEPS = 160
TASK_BASE = {"sentiment": 70.0, "topic": 80.0}  # other tasks: 60
SIZE_BONUS = {"tiny": 0.0, "small": 2.0}
PARAMETERS = {"tiny": 1_570_000, "small": 3_900_000}
# The config's objectives, like config/default.yaml; each summary.json records its run's parsed.
OBJECTIVE_CONFIGS = {
    "clm": {"kind": "clm"},
    "mlm": {"kind": "mlm", "mask_ratio": 0.4, "mask_token_fraction": 0.8, "random_token_fraction": 0.1},
    "mlm_nsp": {"kind": "nsp", "mask_ratio": 0.4},
    "span_corruption": {"kind": "span_corruption", "noise_density": 0.15, "mean_noise_span_length": 3.0},
    "prefix_lm": {"kind": "prefix_lm"},
    "ul2": {"kind": "ul2"},
    "meap": {"kind": "meap", "mask_ratio": 0.15},
    "electra": {"kind": "electra", "mask_ratio": 0.15},
    "mlm_20": {"kind": "mlm", "mask_ratio": 0.2},
    "mlm_30": {"kind": "mlm", "mask_ratio": 0.3},
    "mlm_50": {"kind": "mlm", "mask_ratio": 0.5},
    "mlm_mask_only": {"kind": "mlm", "mask_ratio": 0.4, "mask_token_fraction": 1.0, "random_token_fraction": 0.0},
}


@dataclass(frozen=True)
class FakeRun:
    """A pretraining run as the pretrain stage plans it; the run is ``{name}-{size}``."""

    name: str
    objective: str  # config name of the objective trained (the second one for two-stage and continued runs)
    study: str = "objectives"
    first_step: int = 0
    trained_steps: int = NUM_STEPS
    start: str = "initial"  # initial | checkpoint (two-stage) | final (continued)
    base: str | None = None  # the name of the run it starts from

    @property
    def kind(self) -> str:
        return OBJECTIVE_CONFIGS[self.objective]["kind"]


BASE_RUNS = (FakeRun("clm", "clm"), FakeRun("mlm", "mlm"))
SCRATCH_ZOO = ("mlm_nsp", "span_corruption", "prefix_lm", "ul2", "meap", "electra", "mlm_20", "mlm_30", "mlm_50", "mlm_mask_only")
ZOO_RUNS = (
    *(FakeRun(name, name) for name in SCRATCH_ZOO),
    *(FakeRun(f"clm{share}_mlm", "mlm", "two_stage", NUM_STEPS * share // 100, start="checkpoint", base="clm") for share in (25, 50, 75)),
    *(FakeRun(f"mlm_cpt_on_{base}", "mlm", "continued", trained_steps=CPT_STEPS, start="final", base=base) for base in ("clm", "mlm")),
)
# A shorter two-stage budget: CLM and MLM decayed early from their full runs, and one split.
SHORT_BUDGET = 400
BUDGET_RUNS = (
    *(
        FakeRun(f"{kind}_{SHORT_BUDGET}steps", kind, "short_budget", 300, SHORT_BUDGET, start="checkpoint", base=kind)
        for kind in ("clm", "mlm")
    ),
    FakeRun(f"clm50_mlm_{SHORT_BUDGET}steps", "mlm", "two_stage", SHORT_BUDGET // 2, SHORT_BUDGET, start="checkpoint", base="clm"),
)
ATTENTION = {
    "clm": "causal",
    "meap": "causal",
    "prefix_lm": "prefix",
    "span_corruption": "prefix",
    "ul2": "prefix",
}  # other kinds: bidirectional

# Score bonus (points) and LR penalty per run name.
BONUS = {
    "clm": 0.0,
    "mlm": 3.0,
    "random": -15.0,
    "mlm_nsp": 2.5,
    "span_corruption": 3.5,
    "prefix_lm": 1.0,
    "ul2": 2.0,
    "meap": 0.5,
    "electra": 4.0,
    "mlm_20": 1.0,
    "mlm_30": 2.0,
    "mlm_50": 3.5,
    "mlm_mask_only": 2.5,
    "clm25_mlm": 4.0,
    "clm50_mlm": 4.5,
    "clm75_mlm": 2.0,
    "mlm_cpt_on_clm": 4.5,
    "mlm_cpt_on_mlm": 3.5,
    "clm_400steps": -1.0,
    "mlm_400steps": 1.0,
    "clm50_mlm_400steps": 3.0,
}
LR_PENALTY = {name: {"clm": 2.0, "random": 1.0}.get(name, 4.0) for name in BONUS}  # points per squared decade off the best LR (5e-4)


def standard_bonus(task: str, name: str, size: str) -> float:
    return BONUS[name] + SIZE_BONUS[size]


def standard_penalty(task: str, name: str) -> float:
    return LR_PENALTY[name]


def score_formula(
    bonus: Callable[[str, str, str], float] = standard_bonus,
    penalty: Callable[[str, str], float] = standard_penalty,
    seed_spread: float = 1.0,
) -> ScoreFunction:
    """test = task base + bonus(task, name, size) − penalty(task, name) * (decades off
    5e-4)^2 + seed_spread * (−0.5, 0, +0.5)[seed]; validation = test + 1. ``name`` is the
    run's name (its kind for the clm, mlm and random runs)."""

    def score(task: str, name: str, size: str, learning_rate: float, seed: int) -> tuple[float, float]:
        decades_off = math.log10(learning_rate / 5e-4)
        offset = seed_spread * (seed - 1) / 2
        test = TASK_BASE.get(task, 60.0) + bonus(task, name, size) - penalty(task, name) * decades_off**2 + offset
        return test + 1.0, test

    return score


default_score = score_formula()

CURVE_LAG = {"clm": 6.0, "mlm": 16.0}  # points behind the final model at step 0; other runs: 10


def curve_formula(score: ScoreFunction = default_score, lag: Mapping[str, float] = CURVE_LAG) -> CurveFunction:
    """A checkpoint at ``fraction`` of the budget scores ``score`` less lag[name] * (1 −
    fraction) points. With the defaults MLM − CLM is −4.5 at 25% of the budget, −2 at
    50% and +3 for the final models."""

    def curve(task: str, name: str, size: str, learning_rate: float, seed: int, fraction: float) -> tuple[float, float]:
        behind = lag.get(name, 10.0) * (1 - fraction)
        validation, test = score(task, name, size, learning_rate, seed)
        return validation - behind, test - behind

    return curve


default_curve = curve_formula()


@dataclass
class FakeTree:
    root: Path
    scores: list[Path] = field(default_factory=list)
    outside_scores: list[Path] = field(default_factory=list)
    curve_scores: list[Path] = field(default_factory=list)
    bag_of_words: list[Path] = field(default_factory=list)
    minimal_pairs: list[Path] = field(default_factory=list)
    summaries: list[Path] = field(default_factory=list)
    task_stats: list[Path] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)
    manifests: list[Path] = field(default_factory=list)
    benchmarks: list[Path] = field(default_factory=list)
    corpus_stats: Path | None = None
    claims: Path | None = None

    def result_files(self) -> dict[str, list[Path]]:
        """The tree's result files by kind, as the workflow's manifest lists them (pipeline/result_kinds.py)."""
        return {
            "scores": self.scores,
            "curve_scores": self.curve_scores,
            "outside_scores": self.outside_scores,
            "bag_of_words": self.bag_of_words,
            "minimal_pairs": self.minimal_pairs,
            "summaries": self.summaries,
            "task_stats": self.task_stats,
        }

    def aggregate_argv(self, out: Path, confidence: float = 0.95) -> list[str]:
        """The aggregate's command over the tree, its manifest written beside ``out``."""
        spec = {"confidence": confidence, "claims_file": str(self.claims)}
        manifest = out.parent / f"{out.name}_result_files.json"
        write_manifest(manifest, {kind: [str(path) for path in paths] for kind, paths in self.result_files().items()})
        return ["aggregate", "--spec", json.dumps(spec), "--results", str(manifest), "--out", str(out)]

    def report_argv(self, tables: Path, reports: Path) -> list[str]:
        return [
            "report",
            "--spec",
            json.dumps({"title": "Fake replication", "tasks_left_out": [{"task": "needle", "why": "at zero for every model here"}]}),
            "--scale",
            "Fake scale: two tiny sizes.",
            "--tables",
            str(tables),
            "--logs",
            *map(str, self.logs),
            "--corpus-stats",
            str(self.corpus_stats),
            "--manifests",
            *map(str, self.manifests),
            "--benchmarks",
            *map(str, self.benchmarks),
            "--html",
            str(reports / "replication.html"),
            "--pdf",
            str(reports / "replication.pdf"),
            "--figures-dir",
            str(reports / "figures"),
        ]


def write_json(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))
    return path


def record(path: Path, spec: dict | None = None) -> Path:
    """``path``'s sha256 under outputs in the provenance.json beside it, as the stage that writes
    such a file records it (the aggregate verifies every input against it); ``spec``, the job's."""
    provenance = path.parent / "provenance.json"
    recorded = json.loads(provenance.read_text()) if provenance.is_file() else {"spec": spec or {}, "outputs": {}}
    recorded["outputs"][path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    provenance.write_text(json.dumps(recorded))
    return path


def rewrite(path: Path, data: object) -> Path:
    """A result file edited by a test as its job would have written it: its record updated too
    (so that what the test probes is the edit, not the checksum)."""
    path.write_text(json.dumps(data))
    return record(path)


# Bag of words per C: C = 1 is best on validation, C = 0.1 would be best on test.
BAG_OF_WORDS_POINTS = {
    0.1: lambda seed: {"validation": 60.0, "test": 80.0},
    1.0: lambda seed: {"validation": 70.0, "test": 66.0 + seed},
}


CLASSIFICATION_STATS = {"type": "sequence_classification", "label_counts": {"a": 500, "b": 400}}


def qa_stats(unanswerable: int) -> dict[str, Any]:
    """What an extractive QA task's stats.json says of its 200 test questions (``unanswerable`` of them without an answer)."""
    return {"type": "extractive_qa", "label_counts": {"test": {"answerable": 200 - unanswerable, "unanswerable": unanswerable}}}


def write_fake_results(
    root: Path,
    score: ScoreFunction = default_score,
    tasks: tuple[str, ...] = ("sentiment", "topic"),
    sizes: tuple[str, ...] = ("tiny", "small"),
    seeds: tuple[int, ...] = (0, 1, 2),
    learning_rates: tuple[float, ...] = (1e-4, 5e-4, 2e-3),
    selection_seeds: tuple[int, ...] | None = None,
    families: dict[str, str] | None = None,
    unanswerable: dict[str, int] | None = None,
    zoo_sizes: tuple[str, ...] = (),
    budget_sizes: tuple[str, ...] = (),
    zoo_steps: int | None = None,
    curve_sizes: tuple[str, ...] = (),
    curve_runs: tuple[str, ...] = ("clm", "mlm"),
    curve_steps: tuple[int, ...] = (150, 300),
    curve: CurveFunction = default_curve,
) -> FakeTree:
    """Every file the report stages read, for CLM, MLM and random-init runs at ``sizes``
    and the zoo, two-stage and continued runs at ``zoo_sizes``, and a shorter two-stage
    budget's runs at ``budget_sizes`` (with ``zoo_steps``, the from-scratch zoo trains that budget); every task is in family
    SC unless ``families`` says otherwise; the tasks of ``unanswerable`` are extractive QA
    with that many unanswerable test questions (the others: sequence classification). The runs named in ``curve_runs`` at
    ``curve_sizes`` also get learning-curve scores at each of ``curve_steps`` inside
    their budget (a second stage: after its split), as the pretrain stage saves them.
    With ``selection_seeds`` the grids are the sweep's: those seeds at every LR, the
    others at the LR they chose on validation."""
    families = families or {}
    unanswerable = unanswerable or {}
    tree = FakeTree(root)

    def write_scores(
        task: str, name: str, kind: str, size: str, score_at: Callable[[float, int], tuple[float, float]], step: int | None = None
    ) -> Path:
        def point(rate: float, seed: int) -> dict[str, Any]:
            return dict(zip(("validation", "test"), score_at(rate, seed)), learning_rate=rate, seed=seed, trained_steps=250, seconds=3.2)

        selecting = seeds if selection_seeds is None else selection_seeds
        grid = [point(rate, seed) for rate in learning_rates for seed in selecting]
        chosen = best_on_validation((p["learning_rate"], p["validation"]) for p in grid)
        grid += [point(chosen, seed) for seed in seeds if seed not in selecting]
        for point in grid:  # the metric's whole dict: the headline and one breakdown number
            point["test_scores"] = {"accuracy": point["test"], "half": point["test"] / 2}
        return write_json(
            root / f"results/finetune/{task}/{name}-{size}" / ("" if step is None else f"step-{step}") / "scores.json",
            {
                "task": task,
                "family": families.get(task, "SC"),
                "metric": "accuracy",
                "metric_headline": "accuracy",
                "higher_is_better": True,
                "run": f"{name}-{size}",
                "objective": name,
                "objective_kind": kind,
                "size": size,
                "attention": "bidirectional",
                "selection_seeds": list(selecting),
                "chosen_learning_rate": chosen,
                "grid": grid,
                **({} if step is None else {"pretraining_step": step}),
            },
        )

    zoo_runs = [replace(run, trained_steps=zoo_steps) if zoo_steps and run.name in SCRATCH_ZOO else run for run in ZOO_RUNS]
    runs = [(run, size) for size in sizes for run in BASE_RUNS] + [(run, size) for size in zoo_sizes for run in zoo_runs]
    runs += [(run, size) for size in budget_sizes for run in BUDGET_RUNS]
    for name, kind, size in [(run.name, run.kind, size) for run, size in runs] + [("random", "random", size) for size in sizes]:
        for task in tasks:
            tree.scores.append(write_scores(task, name, kind, size, partial(score, task, name, size)))
    for run, size in runs:
        if run.name not in curve_runs or size not in curve_sizes:
            continue
        for step in (s for s in curve_steps if run.first_step < s < run.trained_steps):
            for task in tasks:
                at_step = partial(curve, task, run.name, size, fraction=step / run.trained_steps)
                tree.curve_scores.append(write_scores(task, run.name, run.kind, size, at_step, step))
    for run, size in runs:
        tree.summaries.append(write_pretraining(root, run, size))
        tree.logs.append(write_log(root, run, size))
    for task in tasks:
        tree.task_stats.append(
            write_json(
                root / f"results/data/tasks/{task}/stats.json",
                {
                    "task": task,
                    "family": families.get(task, "SC"),
                    "metric": "accuracy",
                    **(qa_stats(unanswerable[task]) if task in unanswerable else CLASSIFICATION_STATS),
                    "proxy_for": "SST-2" if task == "sentiment" else None,
                    "description": f"The {task} task, labels from the source.",
                    "labels": ["a", "b"],
                    "num_rows": {"train": 900, "validation": 50, "test": 200},
                    "duplicates_removed": 3,
                    "majority_label": "a",
                    "majority_test_score": 51.2,
                    "source": {"artifact": "fake"},
                },
            )
        )
    if "sentiment" in tasks:  # the lexical reference on one task only, so the others show none
        tree.bag_of_words.append(
            write_json(
                root / "results/baselines/sentiment/bag_of_words/scores.json",
                {
                    "task": "sentiment",
                    "metric": "accuracy",
                    "num_examples": 800,
                    "best_regularization": 1.0,
                    "grid": [
                        BAG_OF_WORDS_POINTS[c](seed) | {"regularization": c, "seed": seed} for c in BAG_OF_WORDS_POINTS for seed in seeds
                    ],
                },
            )
        )
    for size in sizes:
        tree.minimal_pairs += write_minimal_pairs(root, size)
    tree.corpus_stats = write_json(
        root / "results/data/corpus/stats.json",
        {
            "sources": {
                "wiki": {
                    "documents_read": 106,
                    "too_short": 2,
                    "duplicates": 1,
                    "contaminated": 3,
                    "contaminated_lines": 5,
                    "train": 98,
                    "heldout": 2,
                    "words": 500_000,
                }
            },
            "contaminated_by_task": {"sentiment": 1, "topic": 2},
            "decontamination_ngram": 8,
            "totals": {"train_documents": 98, "heldout_documents": 2, "words": 500_000, "characters": 3_000_000},
        },
    )
    tree.manifests.append(
        write_json(
            root / "results/sources/gensim/manifest.json",
            {
                "name": "gensim",
                "requirement": "gensim==4.4.0",
                "filename": "gensim-4.4.0.whl",
                "sha256": "9" * 64,
                "license": "LGPL-2.1",
                "origin": "106 Wikipedia articles",
                "distribution": "wheel",
                "num_files": 1,
            },
        )
    )
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    for rule, name, seconds in (
        ("pretrain", "clm-tiny", "160.2"),
        ("pretrain", "mlm-tiny", "150.0"),
        ("finetune", "sentiment-clm-tiny", "30.5"),
    ):
        path = root / f"benchmarks/{rule}/{name}.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(header + f"{seconds}\t0:02:40\t812.5\t2000\t-\t-\t1.0\t2.0\t95.0\t150.1\n")
        tree.benchmarks.append(path)
    tree.claims = root / "claims.yaml"
    # The project's claims with their checks, short sentences in place of theirs.
    claims = yaml.safe_load((Path(__file__).resolve().parents[1] / "config" / "claims.yaml").read_text())
    tree.claims.write_text(yaml.safe_dump([{**claim, "claim": f"Claim {claim['id']}.", "source": "seed"} for claim in claims]))
    grid = {"finetuning": {"learning_rates": list(learning_rates), "seeds": list(seeds), "selection_seeds": selection_seeds}}
    for path in [*tree.scores, *tree.curve_scores]:
        record(path, grid)
    for path in [*tree.bag_of_words, *tree.minimal_pairs, *tree.summaries, *tree.task_stats]:
        record(path)
    return tree


# Minimal pairs won out of 40 (20 per kind), by (model, method): (swap wins, article wins).
MINIMAL_PAIR_WINS = {
    ("clm", "sentence_log_likelihood"): (14, 16),  # 75%
    ("mlm", "pseudo_log_likelihood"): (18, 18),  # 90%
    ("random", "sentence_log_likelihood"): (10, 10),  # 50%
    ("random", "pseudo_log_likelihood"): (9, 11),  # 50%
}


def write_minimal_pairs(root: Path, size: str) -> list[Path]:
    """Zero-shot scores of clm, mlm and random init: the first ``wins`` pairs of each kind
    have the good sentence ahead (−1 against −2), the rest behind."""
    ids = [f"doc:{i}:{kind}" for kind in ("adjacent_swap", "article") for i in range(20)]
    kinds = [pair_id.rsplit(":", 1)[1] for pair_id in ids]
    paths = []
    for name in ("clm", "mlm", "random"):
        methods = {}
        for (model, method), wins in MINIMAL_PAIR_WINS.items():
            if model == name:
                won = [i < wins[0] for i in range(20)] + [i < wins[1] for i in range(20)]
                methods[method] = {
                    "attention": "causal",
                    "good": [-1.0 if w else -2.0 for w in won],
                    "bad": [-2.0 if w else -1.0 for w in won],
                }
        paths.append(
            write_json(
                root / f"results/zeroshot/minimal_pairs/{name}-{size}/scores.json",
                {
                    "run": f"{name}-{size}",
                    "objective": name,
                    "size": size,
                    "pretraining_step": None,
                    "pll_variant": "within_word_l2r",
                    "not_scored": None,
                    "pair_ids": ids,
                    "kinds": kinds,
                    "methods": methods,
                },
            )
        )
    return paths


def write_pretraining(root: Path, run: FakeRun, size: str) -> Path:
    """A summary.json; its counters cover the run's own steps (a two-stage run's second stage)."""
    attention = ATTENTION.get(run.kind, "bidirectional")
    configured = OBJECTIVE_CONFIGS[run.objective]
    loss_fraction = {"clm": 1.0, "meap": 1.0, "electra": 0.15}.get(run.kind, configured.get("mask_ratio", 0.5))
    metric = (
        {"name": "next_token_perplexity", "value": 73.5}
        if attention != "bidirectional"
        else {"name": "masked_token_accuracy", "value": 31.0}
    )
    start = {
        "kind": run.start,
        "run": run.base and f"{run.base}-{size}",
        "step": run.first_step if run.start == "checkpoint" else None,
        "carry_optimizer": run.start == "checkpoint",
    }
    return write_json(
        root / f"results/pretrain/{run.name}-{size}/summary.json",
        {
            "run": f"{run.name}-{size}",
            "objective": run.objective,
            "objective_kind": run.kind,
            "objective_params": strict.to_plain(parse_objective(dict(configured)).params),  # as the pretrain stage records them
            "attention": attention,
            "size": size,
            "study": run.study,
            "description": f"{run.name} for {run.trained_steps - run.first_step} steps",
            "started_from": start,
            "first_step": run.first_step,
            "num_parameters": PARAMETERS[size],
            "num_non_embedding_parameters": PARAMETERS[size] // 3,
            "num_study_parameters": 2 * PARAMETERS[size] // 3,  # the non-embedding third and one of two vocabulary matrices
            "trained_steps": run.trained_steps,
            "schedule_steps": run.trained_steps,
            "stopped_before_decay": False,
            "budget_steps": NUM_STEPS,
            "num_tokens": 2048 * (run.trained_steps - run.first_step) * (5 if run.kind == "span_corruption" else 4) // 4,
            "loss_fraction": loss_fraction,
            "final_train_loss": 4.1,
            "heldout_loss": 4.3,
            # its LM head never trains: its discriminator's own yardstick
            "heldout_metric": {"name": "replaced_token_detection_gain", "value": 4.0} if run.kind == "electra" else metric,
            "wall_seconds": 160.0,
            "tokens_per_second": 7680.0,
        },
    )


def write_log(root: Path, run: FakeRun, size: str) -> Path:
    lines = ["step,num_tokens,loss,learning_rate,grad_norm,tokens_per_second,heldout_loss"]
    for step in range(run.first_step + 1, run.first_step + 61):
        loss = 8.0 * math.exp(-(step - run.first_step) / 20) + (4.0 if run.kind == "clm" else 4.6)
        heldout = f"{loss + 0.2:.3f}" if step % 20 == 0 else ""
        lines.append(f"{step},{(step - run.first_step) * 2048},{loss:.3f},0.002,1.1,7680.0,{heldout}")
    path = root / f"results/pretrain/{run.name}-{size}/log.csv"
    path.write_text("\n".join(lines) + "\n")
    return path
