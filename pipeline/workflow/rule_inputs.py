"""What each rule's jobs read, as Snakemake's input functions ask it: one object per planned
workflow (``RuleInputs(resolved)``, built once by rules/common.smk), each method taking a
job's wildcards. Kept here, beside the targets it mirrors, so the rule files stay thin."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from pipeline.errors import PipelineError
from pipeline.workflow import rule_params
from pipeline.workflow.configure import Resolved
from pipeline.workflow.targets import OUTPUTS, corpus_shards, used_sources

Wildcards = Mapping[str, str]

# A prepared task: its splits and its judged documents (empty unless a retrieval task ranks a corpus).
TASK_FILES = ("train", "validation", "test", "documents")


def source_inputs(artifacts) -> list[str]:
    return [OUTPUTS["fetch"].format(source=a) for a in artifacts if a is not None]


def check_fetched_sources(resolved: Resolved) -> None:
    """Snakemake does not rerun a job for a missing intermediate whose consumers are up to date, so
    an extracted/ deleted beside its manifest would only surface when a job next reads it. The way
    back removes the manifest too (checked on every plan, `snakemake -f` included): the fetch then
    runs again, and with it the jobs that read the source."""
    for source in used_sources(resolved):
        fetched = Path("results/sources") / source
        if (fetched / "manifest.json").is_file() and not (fetched / "extracted").is_dir():
            raise PipelineError(
                f"{fetched}/extracted: missing beside its manifest.json; fetch it again: rm {fetched}/manifest.json, then rerun"
                " (the jobs reading this source rerun after it)"
            )


class RuleInputs:
    def __init__(self, resolved: Resolved) -> None:
        self.resolved = resolved
        self.config = resolved.config
        tasks = self.config.tasks
        # Tasks that fine-tune models of their own, and those scored on another's (TaskSpec.trained_with):
        # the fine-tuning rules make the first's outputs, finetune_evaluated the second's (wildcard patterns).
        self.fine_tuned_tasks = "|".join(re.escape(name) for name, task in tasks.items() if task.trained_with is None)
        self.evaluated_tasks = "|".join(re.escape(name) for name, task in tasks.items() if task.trained_with is not None)

    def outside_model_inputs(self, wildcards: Wildcards) -> list[str]:
        """What an import reads: a model of this workflow's results, its directory (the job making it
        comes first); a local or mirrored one, each of its files, so that a file changed in place, which
        leaves the directory's own time as it was, reruns the import. A hub id has none."""
        path = self.config.outside_model(wildcards["name"]).path
        if path.startswith("results/") or not Path(path).is_dir():
            return [path] if path.startswith(("results/", "/", ".")) else []
        return sorted(str(file) for file in Path(path).rglob("*") if file.is_file())

    def tokenizer_inputs(self) -> list[str]:
        """A BPE trains on the corpus; a ready-made tokenizer needs only its directory, if local,
        or the fetched artifact it lies in."""
        ready_made = self.config.tokenizer.ready_made
        if ready_made is None:
            return ["results/data/corpus/index.json", *corpus_shards(self.resolved)]
        if ready_made.artifact is not None:
            return [OUTPUTS["fetch"].format(source=ready_made.artifact)]
        return [ready_made.path] if Path(ready_made.path).is_dir() else []

    def task_source_inputs(self, wildcards: Wildcards) -> list[str]:
        return source_inputs([self.config.tasks[wildcards["task"]].data.artifact])

    def corpus_source_inputs(self, wildcards: Wildcards) -> list[str]:
        return source_inputs([document.artifact for document in self.config.corpus.documents])

    def task_split_inputs(self, wildcards: Wildcards) -> list[str]:
        """A fine-tuning job's prepared task, and those of the tasks scored on its models (``trained_with``)."""
        tasks = [wildcards["task"], *self.config.evaluated_with(wildcards["task"])]
        splits = [f"results/data/tasks/{task}/{split}.jsonl" for task in tasks for split in TASK_FILES]
        return splits + [OUTPUTS["prepare_task"].format(task=task) for task in tasks]

    def pretrain_start(self, wildcards: Wildcards) -> str:
        """The directory a run starts from (rule_params.pretrain_start_dir), or for a checkpoint
        of another run, that run's checkpoints: the output the job depends on."""
        start = self.resolved.plans[f"{wildcards['name']}-{wildcards['size']}"].start
        if start.kind == "checkpoint":
            return f"results/pretrain/{start.run}/checkpoints"
        return rule_params.pretrain_start_dir(self.resolved, wildcards["name"], wildcards["size"])

    def pretrain_tokens(self, wildcards: Wildcards) -> str:
        return f"{rule_params.pretrain_tokens(self.resolved, wildcards['name'], wildcards['size'])}/meta.json"

    def finetune_model(self, wildcards: Wildcards) -> str:
        return rule_params.final_model(wildcards["name"], wildcards["size"])
