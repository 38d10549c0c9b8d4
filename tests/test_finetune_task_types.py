"""Every registered task type end to end: a tiny sweep on a synthetic task directory.

One synthetic task per type (rows in the schema prepare_task writes), fine-tuned by the
real ``python -m pipeline finetune`` stage on the micro model; the sweep must write a
complete, sane scores.json, and the same spec must give the same scores twice.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import get_args

import pytest
import torch

from pipeline.__main__ import main
from pipeline.config import TaskTypeName
from pipeline.data.task_rows import TASK_TYPES
from pipeline.files import read_json, write_json, write_jsonl
from pipeline.finetune.task_types import get_task_type, registered_task_types
from pipeline.metrics import get_metric
from tests.conftest import PARAGRAPHS, record_task_splits, without_timings

SENTENCES = [(s.strip().rstrip(".") + ".", index) for index, p in enumerate(PARAGRAPHS) for s in p.split(". ")]
# The micro tokenizer's 400-token vocabulary spends ~2 tokens a word: short texts fit max_length.
SHORT = [" ".join(s.split()[:6]) for s, _ in SENTENCES]
MAX_LENGTH = 64
NAMES = [("Anna", "Smith"), ("Omar", "Haddad"), ("Lena", "Berg"), ("Tom", "Price"), ("Maya", "Chen"), ("Ivan", "Petrov")]
SPLIT_SIZES = {"train": 24, "validation": 8, "test": 8}


def sentence_pairs(rng: random.Random, n: int) -> list[dict]:
    """Do two sentences come from one paragraph?"""
    rows = []
    for i in range(n):
        (a, pa), (b, pb) = rng.sample(SENTENCES, 2)
        rows.append({"id": f"p{i}", "text": a, "text_pair": b, "label": int(pa == pb)})
    return rows


def name_tags(rng: random.Random, n: int) -> list[dict]:
    """A sentence, then "said <first> <last>": tag the name (B-NAME I-NAME), all else O."""
    rows = []
    for i in range(n):
        first, last = rng.choice(NAMES)
        words = [*rng.choice(SHORT).lower().split(), "said", first, last]
        rows.append({"id": f"t{i}", "tokens": words, "tags": [2] * (len(words) - 2) + [0, 1]})
    return rows


def reporter_questions(rng: random.Random, n: int) -> list[dict]:
    """Who was the reporter? Answerable when the passage names one; every fourth passage is
    long enough that max_length cuts the answer off."""
    rows = []
    for i in range(n):
        first, last = rng.choice(NAMES)
        if i % 3 == 0:
            context, answers = rng.choice(SHORT), {"text": [], "answer_start": []}
        else:
            lead = (rng.choice(SENTENCES)[0] if i % 4 == 1 else rng.choice(SHORT)) + " The reporter was "
            context = f"{lead}{first} {last}."
            answers = {"text": [f"{first} {last}"], "answer_start": [len(lead)]}
        rows.append({"id": f"q{i}", "question": "Who was the reporter?", "context": context, "answers": answers})
    return rows


def sentence_search(rng: random.Random, n: int) -> list[dict]:
    """Query: a sentence's first words and a report number; its document: the numbered sentence."""
    rows = []
    for i in range(n):
        sentence, _ = rng.choice(SENTENCES)
        number = rng.randint(100, 999)
        rows.append(
            {"id": f"d{i}", "query": f"{' '.join(sentence.split()[:4])} report {number}", "document": f"Report {number}: {sentence}"}
        )
    return rows


def magic_numbers(rng: random.Random, n: int) -> list[dict]:
    """A number hidden among short distractors at depth 0 or 1."""
    rows = []
    for i in range(n):
        length, depth = rng.choice([1, 2]), rng.choice([0.0, 1.0])
        distractors = [" ".join(rng.choice(SHORT).split()[:3]) + "." for _ in range(length)]
        number = str(rng.randint(10, 99))
        distractors.insert(int(depth * length), f"The magic number is {number}.")
        rows.append(
            {
                "id": f"n{i}",
                "context": " ".join(distractors),
                "question": "The magic number?",
                "answer": number,
                "length": length,
                "depth": depth,
            }
        )
    return rows


# type -> (family, metric, row maker, stats["labels"])
CASES = {
    "sequence_classification": ("SC", "accuracy", sentence_pairs, ["different", "same"]),
    "token_classification": ("TC", "span_f1", name_tags, ["B-NAME", "I-NAME", "O"]),
    "extractive_qa": ("QA", "squad_v2", reporter_questions, []),
    "qa_token_tagging": ("QA", "qa_token_position_f1", reporter_questions, []),
    "retrieval": ("IR", "ndcg_at_10", sentence_search, []),
    "needle_in_a_haystack": ("NIAH", "exact_match", magic_numbers, []),
}


def make_task(task_type: str, root: Path) -> Path:
    _, _, rows_of, labels = CASES[task_type]
    rng = random.Random(0)
    for split, n in SPLIT_SIZES.items():
        write_jsonl(root / f"{split}.jsonl", rows_of(rng, n))
    write_json(root / "stats.json", {"labels": labels})
    record_task_splits(root)
    return root


def spec_json(task_type: str, objective_kind: str = "random", task_keys: dict | None = None, **finetuning) -> str:
    family, metric, _, _ = CASES[task_type]
    task = {
        "family": family,
        "type": task_type,
        "metric": metric,
        **(task_keys or {}),
        "description": "synthetic",
        "data": {"reader": "none", "artifact": "none"},
        "max_length": MAX_LENGTH,
        **({"needle": {}} if task_type == "needle_in_a_haystack" else {}),
    }
    finetuning = {"tasks": [task_type], "learning_rates": [3e-3], "seeds": [0, 1], "batch_size": 8, "max_steps": 4, **finetuning}
    return json.dumps(
        {
            "task_name": task_type,
            "task": task,
            "run": "random-micro",
            "objective": "random",
            "objective_kind": objective_kind,
            "size": "micro",
            "finetuning": finetuning,
        }
    )


def finetune(spec: str, model: Path, task: Path, out: Path) -> dict:
    assert main(["finetune", "--spec", spec, "--model", str(model), "--task-dir", str(task), "--out", str(out)]) == 0
    return read_json(out / "scores.json")


def test_every_task_type_is_registered_and_has_a_test_case():
    """One set of task types everywhere: the config's names, the rows' rules (data, decontamination,
    the generative and bag-of-words flags) and fine-tuning's registry."""
    assert registered_task_types() == sorted(get_args(TaskTypeName)) == sorted(TASK_TYPES) == sorted(CASES)


@pytest.mark.parametrize("task_type", registered_task_types())
def test_sweep_writes_sane_scores_and_is_deterministic(task_type, init_dir, tmp_path):
    task = make_task(task_type, tmp_path / "task")
    first = finetune(spec_json(task_type), init_dir, task, tmp_path / "a")
    metric = get_metric(CASES[task_type][1])
    assert (first["task"], first["metric"], first["higher_is_better"]) == (task_type, metric.name, True)
    assert [(p["learning_rate"], p["seed"]) for p in first["grid"]] == [(3e-3, 0), (3e-3, 1)]
    for point in first["grid"]:
        assert set(point) == {
            "learning_rate",
            "seed",
            "validation",
            "test",
            "trained_steps",
            "seconds",
            "validation_scores",
            "test_scores",
            "test_examples",
            "phases",
        }
        assert set(point["phases"]) == {"set_up", "training", "scoring"} and min(point["phases"].values()) > 0
        assert math.isclose(sum(point["phases"].values()), point["seconds"])
        assert point["trained_steps"] == 3  # one epoch of 24 examples at batch size 8, under max_steps
        if metric.mean_of_examples:  # one score per test example, averaging to the headline
            assert math.isclose(sum(point["test_examples"]) / len(point["test_examples"]), point["test"])
        else:
            assert point["test_examples"] is None
        for split in ("validation", "test"):
            scores = point[f"{split}_scores"]
            assert point[split] == scores[metric.headline]
            assert all(0 <= value <= 100 for value in scores.values()), scores
    assert without_timings(finetune(spec_json(task_type), init_dir, task, tmp_path / "b")) == without_timings(first)


@pytest.mark.parametrize("task_type", registered_task_types())
def test_every_task_type_makes_its_batches_and_labels_where_the_model_is(task_type, init_dir, tmp_path, monkeypatch):
    """A GPU job sets no default device (PyTorch's device context costs Python time on every op, and a
    fine-tuning step of short texts is all small ops): each tensor a task type makes names the model's
    device. Here its training and scoring run under a default device of "meta", so a tensor made without
    one lands on meta and fails beside the CPU model's; the scores are those of a plain run."""
    cls = get_task_type(task_type)
    for name in ("accumulate", "predict"):

        def on_meta(*args, method=getattr(cls, name)):
            with torch.device("meta"):
                return method(*args)

        monkeypatch.setattr(cls, name, on_meta)
    task = make_task(task_type, tmp_path / "task")
    on_meta_default = finetune(spec_json(task_type), init_dir, task, tmp_path / "meta")
    monkeypatch.undo()
    assert without_timings(on_meta_default) == without_timings(finetune(spec_json(task_type), init_dir, task, tmp_path / "plain"))


@pytest.mark.parametrize(
    ("task_type", "metric", "also"),
    [("extractive_qa", "qa_token_position_f1", "squad_v2"), ("token_classification", "sentence_macro_f1", "span_f1")],
)
def test_the_study_s_metric_heads_and_the_standard_one_is_recorded_beside_it(task_type, metric, also, init_dir, tmp_path):
    spec = spec_json(task_type, task_keys={"metric": metric, "also_metrics": [also]})
    scores = finetune(spec, init_dir, make_task(task_type, tmp_path / "task"), tmp_path / "out")
    headline = get_metric(metric).headline
    for point in scores["grid"]:
        assert point["test"] == point["test_scores"][headline]
        assert (
            f"{also}.{get_metric(also).headline}" in point["test_scores"]
            and f"{also}.{get_metric(also).headline}" in point["validation_scores"]
        )
    assert scores["metric"] == metric


def test_needle_reports_every_cell_and_its_attention(init_dir, tmp_path):
    task = make_task("needle_in_a_haystack", tmp_path / "task")
    rows = [json.loads(line) for line in (task / "test.jsonl").read_text().splitlines()]
    cells = {f"length={r['length']},depth={r['depth']}" for r in rows}
    for kind, attention in (("random", "causal"), ("clm", "causal"), ("prefix_lm", "prefix")):
        scores = finetune(spec_json("needle_in_a_haystack", kind, seeds=[0]), init_dir, task, tmp_path / kind)
        assert scores["attention"] == attention
        assert cells <= set(scores["grid"][0]["test_scores"]) and "exact_match" in scores["grid"][0]["test_scores"]


def test_needle_refuses_a_model_that_cannot_generate(init_dir, tmp_path, capsys):
    task = make_task("needle_in_a_haystack", tmp_path / "task")
    argv = [
        "finetune",
        "--spec",
        spec_json("needle_in_a_haystack", "mlm", seeds=[0]),
        "--model",
        str(init_dir),
        "--task-dir",
        str(task),
        "--out",
        str(tmp_path / "out"),
    ]
    assert main(argv) == 2
    assert "objective kind 'mlm' cannot generate" in capsys.readouterr().err and not (tmp_path / "out").exists()


@pytest.mark.parametrize("precision", ["bf16", "bf16_weights"])
@pytest.mark.parametrize("task_type", registered_task_types())
def test_bf16_sweep_gives_sane_scores(task_type, precision, init_dir, tmp_path):
    """Autocast, and the study's pure-bf16 weights and AdamW state (EncodEval's), for every task type."""
    task = make_task(task_type, tmp_path / "task")
    # prefix_lm: NIAH then runs prefix attention, whose 4-D mask must suit bf16's eager attention too
    grid = finetune(spec_json(task_type, "prefix_lm", precision=precision), init_dir, task, tmp_path / precision)["grid"]
    assert [p["trained_steps"] for p in grid] == [3, 3] and all(0 <= p["test"] <= 100 for p in grid)
    assert read_json(tmp_path / precision / "provenance.json")["spec"]["finetuning"]["precision"] == precision


def test_fine_tuning_trains_with_the_fused_adamw_whose_square_roots_are_the_same_on_any_processor(init_dir, tmp_path, monkeypatch):
    """torch's default AdamW takes its square roots from a CPU approximation whose last bit is the
    processor's (bench/records/cpu-vendor-bits.md); the fused kernel's are exact. Every grid point
    builds the fused one unless the config says otherwise."""
    from pipeline.finetune import sweep

    built = []

    def recording(*args, **kwargs):
        built.append(kwargs.get("fused", False))
        return sweep_build_adamw(*args, **kwargs)

    sweep_build_adamw = sweep.build_adamw
    monkeypatch.setattr(sweep, "build_adamw", recording)
    finetune(spec_json("sequence_classification"), init_dir, make_task("sequence_classification", tmp_path / "task"), tmp_path / "out")
    assert built == [True, True]  # one per grid point


@pytest.mark.parametrize("fused", [False, True], ids=["default", "fused"])
def test_pure_bf16_keeps_weights_and_adam_state_in_bf16_and_loses_updates_below_their_resolution(fused):
    """EncodEval's precision: no fp32 master copy, so a step smaller than half a weight's bf16
    spacing leaves it unchanged, where fp32 moves it."""
    from pipeline.config import OptimizerSpec
    from pipeline.finetune.sweep import in_precision
    from pipeline.optimization import build_adamw

    moved = {}
    for precision in ("fp32", "bf16_weights"):
        layer = in_precision(torch.nn.Linear(4, 4, bias=False), precision)
        layer.weight.data.fill_(1.0)
        optimizer = build_adamw(layer, OptimizerSpec(weight_decay=0.0), 1e-4, fused=fused)
        layer(torch.ones(1, 4, dtype=layer.weight.dtype)).sum().backward()
        optimizer.step()  # Adam's first step: every weight moves by the learning rate, 1e-4
        moved[precision] = float((layer.weight.detach().float() - 1.0).abs().max())
        assert optimizer.state[layer.weight]["exp_avg"].dtype == layer.weight.dtype
    assert moved["fp32"] == pytest.approx(1e-4, rel=1e-2) and moved["bf16_weights"] == 0.0  # bf16's spacing at 1.0 is 2^-7


def test_a_judged_retrieval_task_ranks_its_documents_for_validation_and_test(init_dir, tmp_path):
    """The study's IR datasets: queries {query, relevant} ranked against documents.jsonl, the
    same corpus for both splits; every ranking names only corpus documents, and the per-query
    scores follow the relevant lists (a query with every document relevant scores 100)."""
    task = make_task("retrieval", tmp_path / "task")
    corpus = [{"id": f"doc{i}", "document": f"Report {100 + i}: a sentence about item {i}."} for i in range(12)]
    judged = {
        "validation": [
            {"id": "v0", "query": "item 1 report", "relevant": ["doc1"]},
            {"id": "v1", "query": "item 2", "relevant": ["doc2", "doc3"]},
        ],
        "test": [
            {"id": "t0", "query": "item 4", "relevant": ["doc4"]},
            {"id": "t1", "query": "anything", "relevant": [d["id"] for d in corpus]},
        ],
    }
    for split, rows in judged.items():
        write_jsonl(task / f"{split}.jsonl", rows)
    write_jsonl(task / "documents.jsonl", corpus)
    record_task_splits(task)
    spec = spec_json("retrieval", task_keys={"metric": "encodeval_ndcg_at_10", "also_metrics": ["ndcg_at_10"]})
    scores = finetune(spec, init_dir, task, tmp_path / "out")
    for point in scores["grid"]:
        assert len(point["test_examples"]) == 2 and point["test_examples"][1] == 100.0
        assert 0 <= point["validation"] <= 100 and point["test"] == sum(point["test_examples"]) / 2
