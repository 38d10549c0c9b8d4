"""config/paper.yaml staged from a fake hub (tests/paper_hub.py) and read back offline: every
repository it names is found and mirrored (a config's files only), the config resolves to the
mirror, and each of the study's 12 datasets is prepared from the mirror by its own task file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from pipeline import strict
from pipeline.__main__ import main
from pipeline.data.sources.mirror import local_source
from pipeline.external.hub_records import hub_records
from pipeline.staging.references import references
from pipeline.workflow.configure import read_configs, resolve_files
from tests.conftest import REPO
from tests.paper_hub import write_paper_hub, write_placeholder_models

PAPER = str(REPO / "config" / "paper.yaml")


@pytest.fixture(scope="module")
def mirror(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("paper-hub")
    hub = write_paper_hub(root / "hub")
    config = resolve_files(read_configs([PAPER]), [PAPER]).config
    models = [r.repo for r in references(config) if r.kind == "model"]
    write_placeholder_models(hub, models)
    assert main(["stage", "--configfile", PAPER, "--to", str(root / "mirror"), "--from-directory", str(hub)]) == 0
    return root / "mirror"


def test_every_repository_the_paper_reads_is_staged_and_only_what_it_reads(mirror):
    staged = json.loads((mirror / "manifest.json").read_text())["repositories"]
    # 36 references: glue's three configs share one repository, mldr-en's two another; the tokenizer
    # is no hub repository (config/paper.yaml pins it from the npm registry)
    assert len(staged) == 33 and not any("meta-llama" in repository for repository in staged)
    fineweb = ["README.md", "sample/100BT/000_00000.parquet", "sample/100BT/001_00000.parquet"]  # not sample/10BT's
    assert sorted(staged["datasets/HuggingFaceFW/fineweb-edu"]["files"]) == fineweb
    assert sorted(staged["datasets/BeIR/msmarco"]["files"]) == ["corpus.jsonl.gz", "queries.jsonl.gz"]


def test_the_paper_config_reads_the_mirror_and_prepares_each_dataset_from_it(mirror, tmp_path):
    overlay = tmp_path / "offline.yaml"
    overlay.write_text(yaml.safe_dump({"hub_mirror": str(mirror)}))
    config = resolve_files(read_configs([PAPER, str(overlay)]), [PAPER, str(overlay)]).config
    corpus = config.corpus.documents[0].hub  # names what it reads, and where it reads it from
    assert (corpus.path, corpus.mirror) == ("HuggingFaceFW/fineweb-edu", str(mirror))
    fineweb = mirror / "datasets" / "HuggingFaceFW" / "fineweb-edu" / "sample" / "100BT"
    # the files its card gives sample-100BT, read as local Parquet (record batches: flat memory)
    assert local_source(corpus) == ("parquet", {"train": [str(fineweb / "000_00000.parquet"), str(fineweb / "001_00000.parquet")]})
    assert config.tokenizer.ready_made.location == "results/sources/llama3_tokenizer/extracted/package/models"  # not the mirror's
    as_written = resolve_files(read_configs([PAPER]), [PAPER]).config
    sizes = {}
    for name in config.finetuning.tasks:
        assert config.tasks[name].test_source == as_written.tasks[name].test_source  # what study-results pairs on does not move
        spec = json.dumps(strict.to_plain(config.tasks[name]))
        out = tmp_path / name
        assert main(["prepare-task", "--name", name, "--spec", spec, "--sources", str(tmp_path), "--out", str(out)]) == 0, name
        sizes[name] = json.loads((out / "stats.json").read_text())["num_rows"]
    assert sizes["mnli"]["test"] == 24 and sizes["conll2003"]["test"] == 24 and sizes["record"]["test"] == 24
    assert sizes["msmarco"]["test"] == 8 and sizes["mldr_en"] == {"train": 24, "validation": 6, "test": 6}
    assert sizes["nq"]["validation"] + sizes["nq"]["test"] == 24
    # the published first rows, ids as the hub gives them: CoNLL's raw IOB1 tags (EU = I-ORG, German =
    # I-MISC), OntoNotes' bare int32 tags named by its label map
    records = hub_records().datasets
    for name, tags in (("conll2003", "ner"), ("ontonotes", "tags")):
        first = json.loads((tmp_path / name / "train.jsonl").read_text().splitlines()[0])
        published = records[name].parts[0].first_row.row
        assert (first["tokens"], first["tags"]) == (published[tokens_column(name)], published[tags]), name
        assert json.loads((tmp_path / name / "stats.json").read_text())["labels"] == list(records[name].parts[0].label_names[tags])


def tokens_column(name: str) -> str:
    return {"conll2003": "words"}.get(name, "tokens")


def test_the_paper_s_tokenizer_is_llama_3_s_with_the_study_s_ids(study_tokenizer_dir):
    """Llama-3's own tokenizer (conftest's study_tokenizer_dir: config/paper.yaml's npm pin, taken
    by train-tokenizer): 128,256 ids, the study's <|mask|> at 128002 (its first reserved token),
    bos 128000, eos 128001, pad the next reserved."""
    from transformers import AutoTokenizer

    from pipeline.tokenization.special_tokens import SpecialIds

    special = SpecialIds.from_tokenizer(AutoTokenizer.from_pretrained(study_tokenizer_dir))
    assert (special.vocab_size, special.bos, special.eos, special.mask, special.pad) == (128256, 128000, 128001, 128002, 128003)
    recorded = json.loads((study_tokenizer_dir / "provenance.json").read_text())
    assert recorded["ready_made"]["artifact"] == "llama3_tokenizer"
    assert recorded["inputs"]["ready_made"]["path"].endswith("llama3_tokenizer/extracted/package/models")  # with its checksum


def test_a_staged_file_changed_since_is_refused_by_the_job_that_reads_it(mirror, tmp_path, capsys):
    """SST-2's train labels flipped in the mirror: prepare-task refuses it in one line naming the
    file and both hashes; an untouched mirror's files are recorded among its inputs."""
    import shutil

    changed = tmp_path / "mirror"
    shutil.copytree(mirror, changed)
    overlay = tmp_path / "offline.yaml"
    overlay.write_text(yaml.safe_dump({"hub_mirror": str(changed)}))
    config = resolve_files(read_configs([PAPER, str(overlay)]), [PAPER, str(overlay)]).config
    spec = json.dumps(strict.to_plain(config.tasks["sst2"]))
    argv = ["prepare-task", "--name", "sst2", "--spec", spec, "--sources", str(tmp_path)]
    assert main([*argv, "--out", str(tmp_path / "before")]) == 0
    inputs = json.loads((tmp_path / "before" / "provenance.json").read_text())["inputs"]
    train = next((changed / "datasets" / "nyu-mll" / "glue").glob("sst2/train-*"))
    assert any(str(train) in role for role in inputs)
    import pyarrow.parquet as pq

    table = pq.read_table(train)
    flipped = table.set_column(table.schema.get_field_index("label"), "label", pyarrow_flip(table.column("label")))
    pq.write_table(flipped.replace_schema_metadata(table.schema.metadata), train)
    capsys.readouterr()
    assert main([*argv, "--out", str(tmp_path / "after")]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f"error: {train}: sha256 ") and "recorded when it was staged; it changed since" in error
    assert not (tmp_path / "after").exists()


def pyarrow_flip(labels):
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.subtract(pa.scalar(1, labels.type), labels)


def test_a_parquet_conversion_under_another_config_directory_is_refused_naming_the_ones_there(tmp_path, capsys):
    hub = write_paper_hub(tmp_path / "hub")
    conversion = hub / "datasets" / "hgissbkh" / "ontonotes5@~parquet"
    (conversion / "ontonotes5").rename(conversion / "default")
    write_placeholder_models(hub, [r.repo for r in references(resolve_files(read_configs([PAPER]), [PAPER]).config) if r.kind == "model"])
    assert main(["stage", "--configfile", PAPER, "--to", str(tmp_path / "mirror"), "--list", "--from-directory", str(hub)]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("error: dataset hgissbkh/ontonotes5@~parquet: no file matches ontonotes5/train/*.parquet")
    assert error.endswith("; its directories: default")


def test_staging_says_in_one_line_how_a_repository_differs_from_its_record(tmp_path, caplog, monkeypatch):
    import datasets

    from pipeline.staging.client import DirectoryHub

    hub = write_paper_hub(tmp_path / "hub")
    write_placeholder_models(hub, [r.repo for r in references(resolve_files(read_configs([PAPER]), [PAPER]).config) if r.kind == "model"])
    conll = hub / "datasets" / "hgissbkh" / "conll2003-en" / "data" / "train-00000-of-00001.parquet"
    bare = datasets.Dataset.from_parquet(str(conll)).cast_column("ner", datasets.List(datasets.Value("int64")))
    bare.to_parquet(conll)  # the tags as bare ids, as if the copy had lost its ClassLabel
    monkeypatch.setattr(DirectoryHub, "serves_the_hub", True)  # its row counts read as the hub's
    caplog.set_level("WARNING")
    assert main(["stage", "--configfile", PAPER, "--to", str(tmp_path / "mirror"), "--from-directory", str(hub)]) == 0
    lines = {
        record.getMessage().split(" differs")[0]: record.getMessage()
        for record in caplog.records
        if "differs from its record" in record.getMessage()
    }
    assert lines["dataset hgissbkh/conll2003-en"] == (
        "dataset hgissbkh/conll2003-en differs from its record (hub_records.yaml): column 'ner' is list<int64>, recorded list<class_label>;"
        " split 'train' has 25 rows, recorded 14,042; split 'validation' has 24 rows, recorded 3,252;"
        " split 'test' has 24 rows, recorded 3,454"
    )
