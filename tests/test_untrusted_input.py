"""Configs are untrusted input: no value reaches a shell unquoted, and values that could, or that
name a file outside the results, are refused at plan time.

The shell test plans the smoke DAG with hostile strings in every free-text key a user can set,
then runs every planned job's command through bash with the Python stage replaced by ``true``:
bash still expands every word, so an unquoted ``$(...)`` or backquote would leave its marker.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from pipeline.files import read_json
from tests.conftest import REPO, run_snakemake

RULE_FILES = sorted((REPO / "rules").glob("*.smk"))
PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def shell_templates(path: Path) -> list[str]:
    """The lines of a rule file's shell commands: each ``shell:`` block and each ``*_COMMAND = ...``
    constant, on one line or in parentheses."""
    templates, in_shell, shell_indent, in_command = [], False, 0, False
    for line in path.read_text().splitlines():
        stripped, indent = line.strip(), len(line) - len(line.lstrip())
        if in_shell and stripped and indent <= shell_indent:
            in_shell = False
        if in_command and stripped.startswith(")"):
            in_command = False
        if (in_shell or in_command) and stripped and not stripped.startswith("#"):
            templates.append(stripped)
        if stripped == "shell:":
            in_shell, shell_indent = True, indent
        if re.fullmatch(r"[A-Z_]+_COMMAND = \(", stripped):
            in_command = True
        elif re.match(r"[A-Z_]+_COMMAND = \S", stripped):
            templates.append(stripped)
    return templates


def test_every_shell_command_quotes_every_value():
    lines = [(path.name, line) for path in RULE_FILES for line in shell_templates(path)]
    assert len(lines) > 30  # the parser found the commands
    unquoted = [(name, field) for name, line in lines for field in PLACEHOLDER.findall(line) if not field.endswith(":q")]
    assert unquoted == []


def hostile(marker_dir: Path, key: str) -> str:
    """A string that, expanded unquoted by bash, creates ``marker_dir/<key>-*``; every kind of quote in it."""
    marker = marker_dir / key
    return f"x $(touch {marker}-dollar) `touch {marker}-backquote` '; touch {marker}-single; ' \"; touch {marker}-double; \" x"


@pytest.mark.slow
def test_hostile_strings_in_a_config_run_nothing(tmp_path):
    markers = tmp_path / "markers"
    markers.mkdir()
    workdir = tmp_path / "work"
    # A directory name bash could run: its markers, relative to the jobs' working directory, land there.
    study = workdir / f"study {hostile(Path('.'), 'MARKER-study_path')}".replace("./", "")
    study.mkdir(parents=True)
    overlay = {
        "scale": hostile(markers, "scale"),
        "report": {"title": hostile(markers, "title")},
        "sources": {"vaderSentiment": {"origin": hostile(markers, "origin"), "license": hostile(markers, "license")}},
        "tasks": {"sentiment": {"description": hostile(markers, "description"), "proxy_for": hostile(markers, "proxy_for")}},
        "objectives": {"mlm": {"kind": "mlm", "mask_ratio": 0.4}},
        "study_results": {"path": str(study), "pairs": ["a:b"], "models": {"clm_reimported": "c"}, "tasks": {"sentiment": "d"}},
    }
    (workdir / "hostile.yaml").write_text(yaml.safe_dump(overlay))
    done = run_snakemake(workdir, (REPO / "config" / "smoke.yaml", workdir / "hostile.yaml"), "-n", "-p")
    assert done.returncode == 0, done.stderr[-3000:]
    commands = [line.removeprefix("Shell command: ") for line in done.stdout.splitlines() if line.startswith("Shell command: ")]
    planned = {words[3] for words in map(shlex.split, commands) if len(words) > 3 and words[1:3] == ["-m", "pipeline"]}
    assert {"fetch", "prepare-task", "pretrain", "finetune", "aggregate", "report", "study-results"} <= planned
    for line in commands:
        inert = line.replace(shlex.quote(sys.executable), "true")
        log = re.search(r"> (\S+) 2>&1$", inert)
        if log:
            (workdir / shlex.split(log.group(1))[0]).parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["bash", "-c", f"set -euo pipefail; exec </dev/null; {inert}"], cwd=workdir, timeout=60)
    assert sorted(p.name for p in markers.iterdir()) + sorted(p.name for p in workdir.glob("MARKER-*")) == []


@pytest.mark.parametrize(
    ("overlay", "error"),
    [
        (
            {"study_results": {"path": ".", "tasks": {"sentiment": "sst2$(touch /tmp/x)"}}},
            "study_results: tasks.sentiment: 'sst2$(touch /tmp/x)' is not a name of the study's results (letters, digits, '_', '.', '-')",
        ),
        (
            {"study_results": {"path": ".", "pairs": ["--out=/tmp:b"]}},
            "study_results: pairs: '--out=/tmp:b' is not modelA:modelB (names of letters, digits, '_', '.', '-')",
        ),
        (
            {"study_results": {"path": ".", "models": {"clm_reimported": "a b"}}},
            "study_results: models.clm_reimported: 'a b' is not a name of the study's results (letters, digits, '_', '.', '-')",
        ),
        (
            {"sources": {"vaderSentiment": {"filename": "/etc/passwd"}}},
            "sources.vaderSentiment: filename '/etc/passwd' must be a bare file name (letters, digits, '.', '_', '+', '-'; no path)",
        ),
        (
            {"sources": {"vaderSentiment": {"filename": "../../../x.whl"}}},
            "sources.vaderSentiment: filename '../../../x.whl' must be a bare file name (letters, digits, '.', '_', '+', '-'; no path)",
        ),
        (
            {"sources": {"vaderSentiment": {"requirement": "--index-url=http://x"}}},
            "sources.vaderSentiment: requirement '--index-url=http://x' would be read by pip as an option",
        ),
    ],
)
def test_values_that_could_run_code_or_leave_the_results_are_refused_at_plan_time(tmp_path, overlay, error):
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(overlay))
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", "check-config", str(REPO / "config" / "smoke.yaml"), str(tmp_path / "bad.yaml")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: {tmp_path / 'bad.yaml'}: {error}"


def test_json_outputs_are_always_json(tmp_path):
    """NaN and Infinity are not JSON: a stage's JSON output holding one is refused, nothing written."""
    from pipeline.errors import PipelineError
    from pipeline.files import write_json

    with pytest.raises(PipelineError) as error:
        write_json(tmp_path / "scores.json", {"learning_rate": float("inf")})
    assert (
        str(error.value)
        == f"{tmp_path / 'scores.json'}: not written, it would hold a non-finite number (NaN or Infinity), which JSON cannot"
    )
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- round 4: plan-time refusals
# Each case was a probe that passed check-config and failed later in a job (after Snakemake had
# removed the job's previous outputs), or read outside the results; each now stops the plan in
# one line naming the file and the key.

HUB_TASK = {
    "family": "SC",
    "type": "sequence_classification",
    "metric": "accuracy",
    "description": "a probe",
    "data": {"reader": "hf", "hub": {"path": "json", "data_files": {"train": "x.jsonl"}, "fields": {"text": "sentence", "label": "label"}}},
}
JUDGED_TASK = {
    "family": "IR",
    "type": "retrieval",
    "metric": "ndcg_at_10",
    "description": "a probe",
    "data": {"reader": "hf", "hub": {"path": "json", "data_files": {"train": "t.jsonl"}, "fields": {"query": "q", "document": "d"}}},
    "judgements": {
        "qrels": {
            "path": "json",
            "data_files": {"dev": "qrels.jsonl"},
            "splits": {"validation": "dev", "test": "dev"},
            "fields": {"query_id": "qid", "document_id": "did", "query": "q"},
        },
        "corpus": {"path": "json", "data_files": {"train": "c.jsonl"}, "fields": {"document_id": "_id", "document": "text"}},
    },
}
TINY_SIZE = {"num_layers": 1, "hidden_size": 8, "num_heads": 1, "num_kv_heads": 1, "ffn_size": 8}
NAME_RULE = "must be 1 to 64 ASCII letters, digits or '_' (it names folders and jobs)"
OUTSIDE_MIRROR = "which would read outside the hub mirror"


@pytest.mark.parametrize(
    ("overlay", "error"),
    [
        (
            {"tasks": {"probe": {**HUB_TASK, "templates": {"text": "Text: {qeury}"}}}},
            "tasks.probe: templates.text: {qeury} is not a field its source maps (fields: label, text)",
        ),
        (
            {"tasks": {"probe": {**HUB_TASK, "templates": {"text": "{__class__}"}}}},
            "tasks.probe: templates.text: {__class__} is not a field its source maps (fields: label, text)",
        ),
        ({"tasks": {"probe": {**HUB_TASK, "templates": {"text": " "}}}}, "tasks.probe: templates.text: the template is empty"),
        (
            {"tasks": {"sentiment": {"templates": {"text": "{text}"}}}},
            "tasks.sentiment: templates: reader 'vader_movie_snippets' gives its rows ready-made; templates rebuild a hub source's fields",
        ),
        (
            {"tasks": {"probe": JUDGED_TASK}},
            "tasks.probe.judgements: qrels: validation and test read the same judgements (dev);"
            " the learning rate would be chosen on the test queries",
        ),
        ({"report": {"title": "x" * 200_000}}, "report.title: 200,000 characters, more than the 10,000 any value of the config may hold"),
        ({"sizes": {"../x": TINY_SIZE}}, f"sizes: name '../x' {NAME_RULE}"),
        ({"objectives": {"my clm": {"kind": "clm"}}}, f"objectives: name 'my clm' {NAME_RULE}"),
        ({"tasks": {"sent\u0456ment": HUB_TASK}}, f"tasks: name 'sent\u0456ment' {NAME_RULE}"),  # a Cyrillic i
        ({"sizes": {"s" * 300: TINY_SIZE}}, f"sizes: name {'s' * 80!r} {NAME_RULE}"),
        (
            {"outside_models": [{"name": "m", "path": "org/model", "objective": "clm", "revision": "../../etc"}]},
            f"outside_models[0]: revision '../../etc' is empty or has a '.' or '..' part, {OUTSIDE_MIRROR}",
        ),
        (
            {
                "tasks": {
                    "probe": {
                        **HUB_TASK,
                        "data": {"reader": "hf", "hub": {**HUB_TASK["data"]["hub"], "data_files": {"train": "hf://datasets/o/n/../../x"}}},
                    }
                }
            },
            f"tasks.probe.data.hub: data_files.train: 'hf://datasets/o/n/../../x' has a '.' or '..' part, {OUTSIDE_MIRROR}",
        ),
        ({"tasks": {"sentiment": {"max_length": 2147483647}}}, "tasks.sentiment.max_length: 2147483647 must be in [1, 131072]"),
        (
            {"hardware": {"cpu_processes_per_run": 3}},
            "hardware.cpu_processes_per_run: 3 processes cannot split pretraining.batch_size 8 evenly",
        ),
        (
            {"hardware": {"cpu_processes_per_run": 512}, "pretraining": {"batch_size": 1024}},
            f"hardware.cpu_processes_per_run: 512 processes, one core each, on a machine of {os.cpu_count()} cores",
        ),
    ],
    ids=[
        "template-typo",
        "template-dunder",
        "template-empty",
        "template-on-a-reader",
        "same-qrels",
        "title-200kb",
        "name-dotdot",
        "name-space",
        "name-lookalike",
        "name-300",
        "revision-dotdot",
        "hf-path-dotdot",
        "max-length",
        "processes-split",
        "processes-cores",
    ],
)
def test_round_4_values_that_would_fail_in_a_job_are_refused_at_plan_time(tmp_path, overlay, error):
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(overlay, allow_unicode=True))
    done = check_config(tmp_path, tmp_path / "bad.yaml")
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: {tmp_path / 'bad.yaml'}: {error}"


def check_config(cwd: Path, overlay: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pipeline", "check-config", str(REPO / "config" / "smoke.yaml"), str(overlay)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (b"seed: 1\nseed: 2\n", "invalid YAML (key 'seed' given twice (line 2))"),
        (b"- seed: 1\n", "a config file holds a mapping of keys, not a list"),
        (b"42\n", "a config file holds a mapping of keys, not a number"),
        (b"scale: caf\xe9\n", "config file is not UTF-8 text (byte 10)"),
        (
            b"seed: 1\nsizes: [tiny\nscale: x\n",
            "invalid YAML (line 3, column 6: expected ',' or ']', but got ':' (while parsing a flow sequence))",
        ),
        (b"seed: 1\n  scale: x\n", "invalid YAML (line 2, column 8: mapping values are not allowed here)"),
    ],
    ids=["duplicate-key", "a-list", "a-scalar", "latin-1", "unclosed-list", "bad-indent"],
)
def test_a_config_file_that_is_not_a_mapping_of_unique_keys_is_one_line(tmp_path, content, error):
    (tmp_path / "bad.yaml").write_bytes(content)
    done = check_config(tmp_path, tmp_path / "bad.yaml")
    assert (done.returncode, done.stderr) == (2, f"error: {tmp_path / 'bad.yaml'}: {error}\n")


def test_a_claims_file_that_is_a_directory_is_one_line(tmp_path):
    (tmp_path / "claims").mkdir()
    (tmp_path / "overlay.yaml").write_text(f"report: {{claims_file: {tmp_path / 'claims'}}}\n")
    done = check_config(tmp_path, tmp_path / "overlay.yaml")
    assert (done.returncode, done.stderr) == (2, f"error: {tmp_path / 'claims'}: a directory, not a claims file\n")


# ---------------------------------------------------------------- round 4: what an import reads


def import_outside(path: Path, out: Path, **spec) -> int:
    from pipeline.__main__ import main

    arguments = ["import-model", "--spec", json.dumps({"name": "outside", "path": str(path), "objective": "clm", **spec})]
    return main([*arguments, "--num-sentinel-tokens", "4", "--out", str(out)])


def zero_the_weights(path: Path) -> None:
    """Every byte after the safetensors header set to zero: the header, and so the load, intact."""
    data = bytearray(path.read_bytes())
    header = 8 + int.from_bytes(data[:8], "little")
    data[header:] = bytes(len(data) - header)
    path.write_bytes(bytes(data))


def test_a_model_of_the_results_with_changed_weights_is_refused_at_import(init_dir, tmp_path, capsys):
    model = tmp_path / "results" / "pretrain" / "clm-micro" / "model"
    shutil.copytree(init_dir, model)
    zero_the_weights(model / "model.safetensors")
    assert import_outside(model, tmp_path / "out") == 2
    error = capsys.readouterr().err
    assert error.startswith(f"error: {model / 'model.safetensors'}: sha256 ") and error.count("\n") == 1
    assert (
        f"is not the {read_json(model / 'provenance.json')['outputs']['model.safetensors']} {model / 'provenance.json'} recorded" in error
    )
    assert not (tmp_path / "out").exists()


@pytest.fixture
def staged_llama(tmp_path) -> Path:
    """A Llama checkpoint staged in a mirror as `python -m pipeline stage` lays it out."""
    from tests.test_outside_models import outside_checkpoint

    path, _ = outside_checkpoint(tmp_path / "hub" / "models" / "org", "llama")
    done = subprocess.run(
        [sys.executable, "-c", STAGE_ONE_MODEL, str(tmp_path / "hub"), str(tmp_path / "mirror")],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    return tmp_path / "mirror" / "models" / "org" / "llama"


# stage() for one model repository, through the real client and manifest code
STAGE_ONE_MODEL = """
import sys
from pathlib import Path
from pipeline.files import write_json
from pipeline.staging.client import DirectoryHub
from pipeline.staging.references import HubReference
from pipeline.staging.manifest import repository_key
from pipeline.workflow.stage import stage_file
hub, mirror = DirectoryHub(Path(sys.argv[1])), Path(sys.argv[2])
reference = HubReference("model", "org/llama", None, None, (), ("outside_models[0].path",))
files = {remote.path: stage_file(hub, reference, remote, mirror) for remote in hub.list_files(reference)}
key = repository_key(reference.kind, reference.repo, reference.revision)
write_json(mirror / "manifest.json", {"repositories": {key: {"files": files}}})
"""


@pytest.mark.parametrize("change", ["changed", "added", "removed"])
def test_a_mirrored_model_whose_files_changed_is_refused_at_import(staged_llama, tmp_path, capsys, change):
    assert import_outside(staged_llama, tmp_path / "fine", hub_id="org/llama") == 0
    manifest = staged_llama.parents[2] / "manifest.json"
    if change == "changed":
        zero_the_weights(staged_llama / "model.safetensors")
        expected = f"error: {staged_llama / 'model.safetensors'}: sha256 "
    elif change == "added":
        (staged_llama / "modeling_llama.py").write_text("import os\n")
        expected = (
            f"error: {staged_llama / 'modeling_llama.py'}: not staged ({manifest} does not list it); remove it, or stage the mirror again"
        )
    else:
        (staged_llama / "config.json").unlink()
        expected = f"error: {staged_llama / 'config.json'}: listed in {manifest} but missing; stage the mirror again"
    capsys.readouterr()
    assert import_outside(staged_llama, tmp_path / "out", hub_id="org/llama") == 2
    error = capsys.readouterr().err
    assert error.startswith(expected) and error.count("\n") == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", [float("nan"), float("inf")], ids=["nan", "inf"])
def test_an_outside_model_with_non_finite_weights_is_refused(tmp_path, capsys, value):
    from tests.test_outside_models import outside_checkpoint

    path, model = outside_checkpoint(tmp_path, "llama")
    with torch.no_grad():
        model.model.layers[1].mlp.down_proj.weight[0, 0] = value
    model.save_pretrained(path)
    capsys.readouterr()  # save_pretrained's progress bar
    assert import_outside(path, tmp_path / "out") == 2
    where = "model.layers.1.mlp.down_proj.weight"
    error = capsys.readouterr().err.strip().splitlines()[-1]  # after transformers' loading bar
    assert error == f"error: outside_models[outside]: '{path}' has 1 non-finite (NaN or infinite) values in {where}; refused"


def test_a_pickled_checkpoint_weights_only_refuses_is_one_line_and_runs_nothing(tmp_path, capsys):
    from tests.test_outside_models import outside_checkpoint

    path, _ = outside_checkpoint(tmp_path, "llama")
    (path / "model.safetensors").unlink()
    marker = tmp_path / "MARKER-unpickled"
    (path / "pytorch_model.bin").write_bytes(pickle.dumps({"x": Planted(str(marker))}))
    capsys.readouterr()
    assert import_outside(path, tmp_path / "out") == 2
    error = capsys.readouterr().err
    assert error == (
        f"error: outside_models[outside].path: the weights of '{path}' are a pickle that holds more than tensors; refused unread"
        " (no code in it ran): a release you trust can be converted to safetensors\n"
    )
    assert "weights_only" not in error and not marker.exists()  # torch's advice to load it unsafely is not passed on


def test_a_cut_weights_file_in_a_local_model_is_one_line(tmp_path, capsys):
    """A local model outside results/ (nothing vouches for its bytes) whose safetensors file was cut."""
    from tests.test_outside_models import outside_checkpoint

    path, _ = outside_checkpoint(tmp_path, "llama")
    weights = path / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:200])
    capsys.readouterr()
    assert import_outside(path, tmp_path / "out") == 2
    error = capsys.readouterr().err
    assert error.startswith(f"error: outside_models[outside].path: cannot load the weights of '{path}': ") and error.count("\n") == 1
    assert not (tmp_path / "out").exists()


class Planted:
    """Unpickled, it would create its marker file."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_corpus_whose_every_document_is_dropped_is_one_line_saying_why(tmp_path, capsys):
    from tests.test_data_prepare_corpus import BBC, prepare

    assert prepare(tmp_path, [BBC], num_shards=2, min_characters=10**9) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "error: corpus: no document left in any shard before deduplication; 12 read: 12 shorter than corpus.min_characters,"
        " 0 sharing an n-gram with a task's validation or test text (corpus.decontamination_ngram)"
    )
    assert not (tmp_path / "corpus" / "corpus" / "index.json").exists()


def test_a_judged_corpus_listing_a_document_twice_is_refused_when_the_task_is_prepared(tmp_path, capsys):
    from tests.test_paper_task_files import prepare_judged_msmarco

    corpus = [{"_id": "100", "title": "", "text": "Passage."}, {"_id": "100", "title": "", "text": "Another passage."}]
    assert prepare_judged_msmarco(tmp_path, corpus, [(1, 100, 1)]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == "error: tasks.msmarco.judgements.corpus: document id '100' is listed twice"
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- round 4: the hub mirror


@pytest.fixture
def hub(tmp_path) -> Path:
    from tests.test_staging import hub as fake_hub

    return fake_hub.__wrapped__(tmp_path)


def stage(tmp_path: Path, hub: Path, *extra: str) -> int:
    from pipeline.__main__ import main
    from tests.test_staging import overlay

    return main(["stage", "--configfile", overlay(tmp_path), "--to", str(tmp_path / "mirror"), "--from-directory", str(hub), *extra])


def test_a_symbolic_link_in_a_hub_repository_is_refused_not_staged(hub, tmp_path, capsys):
    secret = tmp_path / "secret.txt"
    secret.write_text("a file of the machine's")
    (hub / "models" / "org" / "llama" / "tokenizer.json").symlink_to(secret)
    assert stage(tmp_path, hub) == 2
    link = hub / "models" / "org" / "llama" / "tokenizer.json"
    assert capsys.readouterr().err.splitlines()[-1] == f"error: {link}: a symbolic link in model org/llama; a repository holds files only"
    assert not (tmp_path / "mirror" / "models" / "org" / "llama" / "tokenizer.json").exists()


@pytest.mark.parametrize(
    ("manifest", "error"),
    [
        ([], "not a mirror manifest (a mapping whose one key is 'repositories'); stage the mirror again"),
        ({"repositories": {}, "junk": 1}, "not a mirror manifest (a mapping whose one key is 'repositories'); stage the mirror again"),
        ({"repositories": {"models/org/llama": []}}, "repositories.models/org/llama: not a mapping of 'files' (and the 'commit' staged)"),
        (
            {"repositories": {"models/org/llama": {"files": {"config.json": {"size": "big", "sha256": "ab" * 32}}}}},
            "repositories.models/org/llama.files.config.json: not {size: <bytes>, sha256: <64 hex digits>}",
        ),
    ],
    ids=["a-list", "a-junk-key", "a-repository-as-a-list", "a-size-as-text"],
)
def test_a_malformed_mirror_manifest_is_one_line_and_never_kept(hub, tmp_path, capsys, manifest, error):
    (tmp_path / "mirror").mkdir()
    (tmp_path / "mirror" / "manifest.json").write_text(json.dumps(manifest))
    assert stage(tmp_path, hub) == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"error: {tmp_path / 'mirror' / 'manifest.json'}: {error}"
    assert json.loads((tmp_path / "mirror" / "manifest.json").read_text()) == manifest


def test_a_dataset_card_whose_header_is_a_list_is_one_line(hub, tmp_path, capsys):
    (hub / "datasets" / "org" / "reviews" / "README.md").write_text("---\n- config_name: plain\n---\n# A dataset\n")
    assert stage(tmp_path, hub, "--list") == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "error: dataset org/reviews (plain): its card's YAML header is a list, not a mapping of metadata"
    )


def test_a_truncated_torch_file_is_one_line_at_every_length(tmp_path):
    """torch.load of a cut zip raises EOFError, RuntimeError or, for some lengths, OSError: every
    one of them is the same line naming the file and what to do."""
    from pipeline.errors import PipelineError
    from pipeline.pretrain.trainer import load_torch_file

    whole = tmp_path / "state.pt"
    torch.save({"trained": torch.randn(300, 300), "optimizer": {"exp_avg": torch.randn(100)}, "step": 3}, whole)
    data = whole.read_bytes()
    cut = tmp_path / "cut.pt"
    for length in [*range(0, len(data), len(data) // 300), *range(len(data) - 400, len(data))]:
        cut.write_bytes(data[:length])
        with pytest.raises(PipelineError) as error:
            load_torch_file(cut, "delete it to start afresh", weights_only=True)
        assert str(error.value).startswith(f"{cut}: unreadable (") and str(error.value).endswith("); delete it to start afresh")


@pytest.mark.slow
def test_a_local_outside_model_changed_after_its_import_reruns_the_import(tmp_path):
    """Its files are the import's inputs: a weight file rewritten in place (the folder's own time
    unchanged) makes the import due again, where Snakemake once said "Nothing to be done"."""
    from tests.conftest import job_counts, run_snakemake
    from tests.test_outside_models import outside_checkpoint

    path, model = outside_checkpoint(tmp_path / "models", "llama")
    overlay = tmp_path / "outside.yaml"
    reimported = {"name": "clm_reimported", "path": "results/pretrain/clm-micro/model", "objective": "clm", "size": "micro"}
    local = {"name": "local", "path": str(path), "objective": "clm"}
    # its tokenizer has 30 reserved tokens: fewer sentinels than the smoke config's 32
    overlay.write_text(yaml.safe_dump({"outside_models": [reimported, local], "tokenizer": {"num_sentinel_tokens": 4}}))
    configs = (REPO / "config" / "smoke.yaml", overlay)
    target = "results/outside/local/model"
    assert run_snakemake(tmp_path, configs, target).returncode == 0
    assert job_counts(run_snakemake(tmp_path, configs, "-n", target).stdout) == {}
    folder_time = path.stat().st_mtime_ns
    with torch.no_grad():
        model.model.embed_tokens.weight.mul_(2)
    model.save_pretrained(path)
    os.utime(path, ns=(folder_time, folder_time))
    assert job_counts(run_snakemake(tmp_path, configs, "-n", target).stdout) == {"import_model": 1}


def test_a_ready_made_tokenizer_read_from_the_mirror_is_checked_against_its_manifest(staged_llama):
    from pipeline.config import ReadyMadeTokenizer, TokenizerSpec
    from pipeline.errors import PipelineError
    from pipeline.tokenization.ready_made import take_ready_made

    config = staged_llama / "tokenizer_config.json"
    config.write_text(config.read_text().replace("}", ', "model_max_length": 7}', 1))
    spec = TokenizerSpec(vocab_size=412, num_sentinel_tokens=4, ready_made=ReadyMadeTokenizer(str(staged_llama)))
    with pytest.raises(PipelineError) as error:
        take_ready_made(spec)
    assert str(error.value).startswith(f"{config}: sha256 ") and str(error.value).endswith("it changed since: stage the mirror again")
