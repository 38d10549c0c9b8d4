"""The kinds of per-job result the aggregate stage reads, and the manifest listing each kind's files.

A rule declares the kind of result its jobs feed where it registers (``@rule(..., results=...)``,
:mod:`pipeline.workflow.rule_params`); the workflow writes one manifest of every planned job's
result file by kind (:mod:`pipeline.workflow.result_manifest`), and ``aggregate --results`` reads
it here. A new kind of result is one entry of :data:`RESULT_KINDS` and its reader in
:mod:`pipeline.analysis.aggregate`; a new rule feeding an existing kind touches neither.

A floor: imports nothing of the pipeline but its error type and file helpers, so that both the
workflow (which writes the manifest) and the aggregate (which reads it) can depend on it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from pipeline.errors import PipelineError
from pipeline.files import atomic_path

# kind -> what its files are; the aggregate refuses a manifest without a file of a REQUIRED kind
RESULT_KINDS = {
    "scores": "final models' fine-tuning results/finetune/{task}/{run}/scores.json",
    "curve_scores": "learning-curve checkpoints' fine-tuning results/finetune/{task}/{run}-step{N}/scores.json",
    "outside_scores": "outside models' fine-tuning results/finetune_outside/{task}/{name}/scores.json",
    "bag_of_words": "the lexical reference's results/baselines/{task}/bag_of_words/scores.json",
    "minimal_pairs": "the zero-shot minimal pairs' results/zeroshot/minimal_pairs*/{model}/scores.json",
    "summaries": "pretraining runs' results/pretrain/{run}/summary.json",
    "task_stats": "prepared tasks' results/data/tasks/{task}/stats.json",
}
REQUIRED = ("scores", "summaries", "task_stats")

Manifest = Mapping[str, Sequence[str]]  # kind -> result files, in the workflow's job order


def manifest_text(manifest: Manifest) -> str:
    """The manifest as its file holds it: every kind, in :data:`RESULT_KINDS` order."""
    unknown = sorted(set(manifest) - set(RESULT_KINDS))
    if unknown:
        raise ValueError(f"result kind {unknown[0]!r} is not one of {', '.join(RESULT_KINDS)}")
    return json.dumps({kind: list(manifest.get(kind, ())) for kind in RESULT_KINDS}, indent=1) + "\n"


def write_manifest(path: str | Path, manifest: Manifest) -> bool:
    """Write ``manifest`` to ``path`` unless it already holds exactly that: its time stamp is what
    tells Snakemake the planned results changed, so an unchanged plan leaves it untouched. True
    when written."""
    text, path = manifest_text(manifest), Path(path)
    if path.is_file() and path.read_text() == text:
        return False
    with atomic_path(path) as partial:  # which makes the folder
        partial.write_text(text)
    return True


def read_manifest(path: str | Path) -> dict[str, list[Path]]:
    """The result files by kind, every kind present (empty where the plan has none); a malformed
    manifest, an unknown kind or a required kind without files is one line naming the file."""
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise PipelineError(f"{path}: file not found; Snakemake writes it when it plans the workflow (snakemake -n)") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise PipelineError(f"{path}: not a JSON manifest; Snakemake writes it again when it plans the workflow (snakemake -n)") from None
    if not isinstance(data, dict):
        raise PipelineError(f"{path}: expected a JSON object of result kind -> files, got {type(data).__name__}")
    unknown = sorted(set(data) - set(RESULT_KINDS))
    if unknown:
        raise PipelineError(f"{path}: key {unknown[0]!r} is not a result kind ({', '.join(RESULT_KINDS)})")
    files: dict[str, list[Path]] = {}
    for kind in RESULT_KINDS:
        paths = data.get(kind, [])
        if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
            raise PipelineError(f"{path}: key {kind!r} must be a list of file paths")
        files[kind] = [Path(p) for p in paths]
    missing = [kind for kind in REQUIRED if not files[kind]]
    if missing:
        raise PipelineError(f"{path}: key {missing[0]!r} lists no file ({RESULT_KINDS[missing[0]]}); nothing to aggregate without it")
    return files
