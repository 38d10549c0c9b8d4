"""Small fake result trees for the report tests, written as the other stages would.

Scores follow a transparent formula (task base + objective bonus + size bonus − an LR
penalty + a per-seed offset), so each test can say which numbers it expects and can
override the formula to build a specific case.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ScoreFunction = Callable[[str, str, str, float, int], tuple[float, float]]  # -> (validation, test)

TASK_BASE = {"sentiment": 70.0, "topic": 80.0}  # other tasks: 60
KIND_BONUS = {"clm": 0.0, "mlm": 3.0, "random": -15.0}
LR_PENALTY = {"clm": 2.0, "mlm": 4.0, "random": 1.0}  # points per squared decade off the best LR (5e-4)
SIZE_BONUS = {"tiny": 0.0, "small": 2.0}
PARAMETERS = {"tiny": 1_570_000, "small": 3_900_000}


def standard_bonus(task: str, kind: str, size: str) -> float:
    return KIND_BONUS[kind] + SIZE_BONUS[size]


def standard_penalty(task: str, kind: str) -> float:
    return LR_PENALTY[kind]


def score_formula(
    bonus: Callable[[str, str, str], float] = standard_bonus,
    penalty: Callable[[str, str], float] = standard_penalty,
    seed_spread: float = 1.0,
) -> ScoreFunction:
    """test = task base + bonus(task, kind, size) − penalty(task, kind) * (decades off
    5e-4)^2 + seed_spread * (−0.5, 0, +0.5)[seed]; validation = test + 1."""

    def score(task: str, kind: str, size: str, learning_rate: float, seed: int) -> tuple[float, float]:
        decades_off = math.log10(learning_rate / 5e-4)
        offset = seed_spread * (seed - 1) / 2
        test = TASK_BASE.get(task, 60.0) + bonus(task, kind, size) - penalty(task, kind) * decades_off**2 + offset
        return test + 1.0, test

    return score


default_score = score_formula()


@dataclass
class FakeTree:
    root: Path
    scores: list[Path] = field(default_factory=list)
    summaries: list[Path] = field(default_factory=list)
    task_stats: list[Path] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)
    manifests: list[Path] = field(default_factory=list)
    benchmarks: list[Path] = field(default_factory=list)
    corpus_stats: Path | None = None
    claims: Path | None = None

    def aggregate_argv(self, out: Path, confidence: float = 0.95) -> list[str]:
        spec = {"confidence": confidence, "claims_file": str(self.claims)}
        objectives = {"clm": {"kind": "clm"}, "mlm": {"kind": "mlm", "mask_ratio": 0.4}}
        return [
            "aggregate", "--spec", json.dumps(spec), "--objectives", json.dumps(objectives),
            "--scores", *map(str, self.scores), "--summaries", *map(str, self.summaries),
            "--task-stats", *map(str, self.task_stats), "--out", str(out),
        ]  # fmt: skip

    def report_argv(self, tables: Path, reports: Path) -> list[str]:
        return [
            "report", "--spec", json.dumps({"title": "Fake replication"}), "--scale", "Fake scale: two tiny sizes.",
            "--tables", str(tables), "--logs", *map(str, self.logs), "--corpus-stats", str(self.corpus_stats),
            "--manifests", *map(str, self.manifests), "--benchmarks", *map(str, self.benchmarks),
            "--html", str(reports / "replication.html"), "--pdf", str(reports / "replication.pdf"),
            "--figures-dir", str(reports / "figures"),
        ]  # fmt: skip


def write_json(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))
    return path


def write_fake_results(
    root: Path,
    score: ScoreFunction = default_score,
    tasks: tuple[str, ...] = ("sentiment", "topic"),
    sizes: tuple[str, ...] = ("tiny", "small"),
    seeds: tuple[int, ...] = (0, 1, 2),
    learning_rates: tuple[float, ...] = (1e-4, 5e-4, 2e-3),
    families: dict[str, str] | None = None,
) -> FakeTree:
    """Every file the report stages read, for CLM, MLM and random-init runs; every
    task is in family SC unless ``families`` says otherwise."""
    families = families or {}
    tree = FakeTree(root)
    for size in sizes:
        for kind in ("clm", "mlm", "random"):
            run = f"{kind}-{size}"
            for task in tasks:
                grid = [
                    dict(zip(("validation", "test"), score(task, kind, size, rate, seed)), learning_rate=rate, seed=seed, num_steps=250, seconds=3.2)
                    for rate in learning_rates
                    for seed in seeds
                ]
                tree.scores.append(write_json(root / f"results/finetune/{task}/{run}/scores.json", {
                    "task": task, "family": families.get(task, "SC"), "metric": "accuracy", "higher_is_better": True, "run": run,
                    "objective": kind, "objective_kind": kind, "size": size, "attention": "bidirectional", "grid": grid,
                }))  # fmt: skip
            if kind != "random":
                tree.summaries.append(write_pretraining(root, run, kind, size))
                tree.logs.append(write_log(root, run, kind))
    for task in tasks:
        tree.task_stats.append(write_json(root / f"results/data/tasks/{task}/stats.json", {
            "task": task, "family": families.get(task, "SC"), "type": "sequence_classification", "metric": "accuracy",
            "proxy_for": "SST-2" if task == "sentiment" else None, "description": f"The {task} task, labels from the source.",
            "labels": ["a", "b"], "num_rows": {"train": 900, "validation": 50, "test": 200},
            "label_counts": {"a": 500, "b": 400}, "duplicates_removed": 3, "majority_label": "a",
            "majority_test_score": 51.2, "source": {"artifact": "fake"},
        }))  # fmt: skip
    tree.corpus_stats = write_json(root / "results/data/corpus/stats.json", {
        "sources": {"wiki": {"documents_read": 106, "too_short": 2, "duplicates": 1, "contaminated": 3, "contaminated_lines": 5, "train": 98, "heldout": 2, "words": 500_000}},
        "contaminated_by_task": {"sentiment": 1, "topic": 2}, "decontamination_ngram": 8,
        "totals": {"train_documents": 98, "heldout_documents": 2, "words": 500_000, "characters": 3_000_000},
    })  # fmt: skip
    tree.manifests.append(write_json(root / "results/sources/gensim/manifest.json", {
        "name": "gensim", "requirement": "gensim==4.4.0", "filename": "gensim-4.4.0.whl", "sha256": "9" * 64,
        "license": "LGPL-2.1", "origin": "106 Wikipedia articles", "distribution": "wheel", "num_files": 1,
    }))  # fmt: skip
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    for rule, name, seconds in (("pretrain", "clm-tiny", "160.2"), ("pretrain", "mlm-tiny", "150.0"), ("finetune", "sentiment-clm-tiny", "30.5")):
        path = root / f"benchmarks/{rule}/{name}.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(header + f"{seconds}\t0:02:40\t812.5\t2000\t-\t-\t1.0\t2.0\t95.0\t150.1\n")
        tree.benchmarks.append(path)
    tree.claims = root / "claims.yaml"
    tree.claims.write_text(yaml.safe_dump([
        {"id": i, "source": "seed", "claim": f"Claim {i}.", "measure": "m", "status": "s"}
        for i in ("c01", "c02", "c03", "c06", "c07", "c11", "c12", "c18", "c04", "z99")
    ]))  # fmt: skip
    return tree


def write_pretraining(root: Path, run: str, kind: str, size: str) -> Path:
    return write_json(root / f"results/pretrain/{run}/summary.json", {
        "run": run, "objective": kind, "objective_kind": kind, "size": size, "num_parameters": PARAMETERS[size],
        "num_non_embedding_parameters": PARAMETERS[size] // 3, "num_steps": 600, "num_tokens": 1_228_800,
        "loss_fraction": 1.0 if kind == "clm" else 0.4, "final_train_loss": 4.1, "heldout_loss": 4.3,
        "heldout_metric": {"name": "next_token_perplexity", "value": 73.5} if kind == "clm" else {"name": "masked_token_accuracy", "value": 31.0},
        "wall_seconds": 160.0, "tokens_per_second": 7680.0,
    })  # fmt: skip


def write_log(root: Path, run: str, kind: str) -> Path:
    lines = ["step,num_tokens,loss,learning_rate,grad_norm,tokens_per_second,heldout_loss"]
    for step in range(1, 61):
        loss = 8.0 * math.exp(-step / 20) + (4.0 if kind == "clm" else 4.6)
        heldout = f"{loss + 0.2:.3f}" if step % 20 == 0 else ""
        lines.append(f"{step},{step * 2048},{loss:.3f},0.002,1.1,7680.0,{heldout}")
    path = root / f"results/pretrain/{run}/log.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_fake_tree_has_every_input(tmp_path: Path) -> None:
    tree = write_fake_results(tmp_path)
    assert len(tree.scores) == 2 * 3 * 2 and len(tree.summaries) == 4 and len(tree.logs) == 4
