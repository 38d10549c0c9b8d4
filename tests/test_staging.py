"""Offline staging on a fake hub (a directory laid out as the hub is): what a config reads is
listed with its size, a config's files only are mirrored and verified, and a config with
``hub_mirror`` reads the mirror, refusing in one line what was not staged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from pipeline.__main__ import main
from pipeline.data.sources.mirror import local_source
from pipeline.errors import PipelineError
from pipeline.staging.references import references
from pipeline.workflow.configure import read_configs, resolve_files
from tests.conftest import REPO

CARD = """---
configs:
- config_name: plain
  data_files:
  - split: train
    path: plain/train-*.parquet
  - split: validation
    path: plain/validation-*.parquet
- config_name: other
  data_files: other/*.parquet
---
# A dataset
"""


@pytest.fixture
def hub(tmp_path) -> Path:
    """datasets/org/reviews (two configs, by its card), datasets/org/corpus (files read by hf:// URL), models/org/llama."""
    import datasets

    root = tmp_path / "hub"
    reviews = root / "datasets" / "org" / "reviews"
    for config, split in (("plain", "train"), ("plain", "validation"), ("other", "all")):
        (reviews / config).mkdir(parents=True, exist_ok=True)
        rows = {"sentence": [f"a {split} review number {i} of some length." for i in range(20)], "label": [i % 2 for i in range(20)]}
        features = datasets.Features({"sentence": datasets.Value("string"), "label": datasets.ClassLabel(names=["negative", "positive"])})
        datasets.Dataset.from_dict(rows, features=features).to_parquet(reviews / config / f"{split}-00000.parquet")
    (reviews / "README.md").write_text(CARD)
    corpus = root / "datasets" / "org" / "corpus"
    corpus.mkdir(parents=True)
    (corpus / "queries.jsonl").write_text("".join(json.dumps({"_id": str(i), "text": f"query {i}"}) + "\n" for i in range(3)))
    (corpus / "unread.jsonl").write_text("{}\n")
    model = root / "models" / "org" / "llama"
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}")
    (model / "model.safetensors").write_bytes(b"\0" * 1000)
    return root


def overlay(tmp_path: Path, **extra) -> str:
    task = {
        "family": "SC",
        "type": "sequence_classification",
        "metric": "accuracy",
        "description": "Reviews.",
        "data": {
            "reader": "hf",
            "hub": {
                "path": "org/reviews",
                "name": "plain",
                "splits": {"train": "train", "test": "validation"},
                "fields": {"text": "sentence", "label": "label"},
            },
        },
    }
    fields = {"text": "text", "label": "_id"}  # a column for each field of the task's type (the plan checks it; staging reads none)
    queries = {"path": "json", "data_files": {"train": "hf://datasets/org/corpus/queries.jsonl"}, "fields": fields}
    data = {
        "finetuning": {"tasks": ["reviews", "queries"]},
        "tasks": {"reviews": task, "queries": {**task, "description": "Queries.", "data": {"reader": "hf", "hub": queries}}},
        # the default's own outside model (a local directory, never staged) beside a hub one
        "outside_models": [
            {"name": "clm_reimported", "path": "results/pretrain/clm-tiny/model", "objective": "clm", "size": "tiny"},
            {"name": "llama", "path": "org/llama", "objective": "clm"},
        ],
        **extra,
    }
    path = tmp_path / f"overlay-{len(extra)}.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def resolved(*paths: str):
    return resolve_files(read_configs(list(paths)), list(paths)).config


def test_the_references_name_each_repository_once_with_the_keys_that_read_it(tmp_path):
    labels = [(r.label, r.where) for r in references(resolved(overlay(tmp_path)))]
    assert labels == [
        ("dataset org/reviews (plain)", ("tasks.reviews.data.hub.path",)),
        ("dataset org/corpus", ("tasks.queries.data.hub.data_files.train",)),
        ("model org/llama", ("outside_models[1].path",)),
    ]


def test_staging_lists_sizes_then_mirrors_only_what_the_config_reads(hub, tmp_path, capsys, caplog):
    mirror = tmp_path / "mirror"
    argv = ["stage", "--configfile", overlay(tmp_path), "--to", str(mirror), "--from-directory", str(hub)]
    assert main([*argv, "--list"]) == 0
    listing = capsys.readouterr().out
    assert "dataset org/reviews (plain): 3 files" in listing  # its card and the plain config's two files, not `other`
    assert "model org/llama: 2 files" in listing and "total: 3 repositories, 6 files" in listing
    assert not mirror.exists()
    assert main(argv) == 0
    manifest = json.loads((mirror / "manifest.json").read_text())["repositories"]
    assert sorted(manifest["datasets/org/reviews"]["files"]) == ["README.md", "plain/train-00000.parquet", "plain/validation-00000.parquet"]
    assert sorted(manifest["datasets/org/corpus"]["files"]) == ["queries.jsonl"]
    assert manifest["models/org/llama"]["files"]["model.safetensors"]["size"] == 1000
    assert main(argv) == 0  # again: every file already there with its sha256
    changed = mirror / "datasets" / "org" / "corpus" / "queries.jsonl"
    changed.write_text(changed.read_text() + "\n")
    with caplog.at_level("WARNING"):
        assert main(argv) == 0  # staged over a file that changed: said, and replaced
    assert "queries.jsonl was sha256 " in caplog.text and ": replaced" in caplog.text


def test_a_config_with_a_mirror_reads_it_and_refuses_what_was_not_staged(hub, tmp_path):
    mirror = tmp_path / "mirror"
    assert main(["stage", "--configfile", overlay(tmp_path), "--to", str(mirror), "--from-directory", str(hub)]) == 0
    config = resolved(overlay(tmp_path), overlay(tmp_path, hub_mirror=str(mirror)))
    reviews = mirror / "datasets" / "org" / "reviews" / "plain"  # the files its card gives the plain config, read as Parquet
    assert local_source(config.tasks["reviews"].data.hub)[0] == "parquet"
    assert str(reviews / "train-00000.parquet") in local_source(config.tasks["reviews"].data.hub)[1]["train"]
    assert local_source(config.tasks["queries"].data.hub)[1] == {"train": [str(mirror / "datasets" / "org" / "corpus" / "queries.jsonl")]}
    assert [m.path for m in config.outside_models] == ["results/pretrain/clm-tiny/model", str(mirror / "models" / "org" / "llama")]
    assert [m.hub_id for m in config.outside_models] == [None, "org/llama"]  # what names a released checkpoint of the study
    # the task prepared from the mirror alone: the local repository, its card's config and ClassLabel names
    spec = json.dumps(dataclass_plain(config.tasks["reviews"]))
    assert main(["prepare-task", "--name", "reviews", "--spec", spec, "--sources", str(tmp_path), "--out", str(tmp_path / "reviews")]) == 0
    assert json.loads((tmp_path / "reviews" / "stats.json").read_text())["labels"] == ["negative", "positive"]

    shutil.rmtree(mirror / "models" / "org" / "llama")
    with pytest.raises(PipelineError) as error:
        resolved(overlay(tmp_path), overlay(tmp_path, hub_mirror=str(mirror)))
    assert f"outside_models[1].path: model org/llama is not in the mirror {mirror}; stage it" in str(error.value)
    assert "\n" not in str(error.value)


def dataclass_plain(spec):
    from pipeline import strict

    return strict.to_plain(spec)


def test_staging_without_the_hub_is_one_line_at_once(tmp_path, capsys, monkeypatch):
    """No retries logged first (huggingface_hub's ~25 s of them): the hub unreachable is said once."""
    import socket

    def unreachable(address, timeout):
        raise OSError("[Errno -2] Name or service not known")

    from huggingface_hub import constants

    monkeypatch.setattr(socket, "create_connection", unreachable)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    assert main(["stage", "--configfile", str(REPO / "config" / "paper.yaml"), "--list", "--to", str(tmp_path / "mirror")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    [error] = [line for line in captured.err.splitlines() if "INFO" not in line]
    assert error.startswith("error: the hub (https://huggingface.co) cannot be reached from here ([Errno -2] Name or service not known)")


class FakeHubApi:
    """huggingface_hub's HfApi over a directory, with one moving commit: what staging asks of the hub."""

    root: Path
    head = "a" * 40
    asked: list = []

    def repo_info(self, repo, repo_type, revision):
        from types import SimpleNamespace

        return SimpleNamespace(sha=FakeHubApi.head)

    def list_repo_tree(self, repo, repo_type, revision, recursive):
        from huggingface_hub.hf_api import RepoFile

        FakeHubApi.asked.append(("list", revision))
        folder = FakeHubApi.root / f"{repo_type}s" / repo
        return [RepoFile(path=p.relative_to(folder).as_posix(), size=p.stat().st_size, oid="x") for p in sorted(folder.rglob("*.*"))]


def test_staging_from_the_hub_pins_each_repository_to_one_commit(hub, tmp_path, monkeypatch, caplog):
    """Every file listed and downloaded at the commit the revision named when staging began, the
    commit recorded in the manifest; staged again after a push, the move is said."""
    import socket

    import huggingface_hub
    from huggingface_hub import constants

    def download(repo, path, repo_type, revision):
        FakeHubApi.asked.append(("download", revision))
        return str(hub / f"{repo_type}s" / repo / path)

    FakeHubApi.root, FakeHubApi.asked = hub, []
    monkeypatch.setattr(socket, "create_connection", lambda address, timeout: socket.socket())
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeHubApi)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    argv = ["stage", "--configfile", overlay(tmp_path), "--to", str(tmp_path / "mirror")]
    assert main(argv) == 0
    assert {revision for _, revision in FakeHubApi.asked} == {"a" * 40}
    repositories = json.loads((tmp_path / "mirror" / "manifest.json").read_text())["repositories"]
    assert {entry["commit"] for entry in repositories.values()} == {"a" * 40}
    FakeHubApi.head = "b" * 40
    with caplog.at_level("WARNING"):
        assert main(argv) == 0
    assert f"staged at commit {'a' * 40} before, the hub is at {'b' * 40} now" in caplog.text


def test_a_card_s_files_without_a_split_are_train_s_and_a_split_without_files_is_named(tmp_path):
    from pipeline.data.sources.mirror import split_patterns

    assert split_patterns({None: ["data/*.parquet"]}, "train", tmp_path) == ["data/*.parquet"]
    assert split_patterns({"test": ["t/*"], "train": ["r/*"]}, "test", tmp_path) == ["t/*"]
    with pytest.raises(PipelineError, match="its card gives the config no files for split 'validation'"):
        split_patterns({None: ["data/*.parquet"]}, "validation", tmp_path)
