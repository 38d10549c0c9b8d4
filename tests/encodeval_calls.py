"""Each paper dataset's first examples as this harness encodes them, beside EncodEval's tokenizer
calls on the same rows, written out from its code (hgissbkh/EncodEval's ``datasets.py`` and
``abstract_eval.py``; the writers' calls as read in the fork ``Theodb/EncodEval``; QA's from
REFERENCE.md section 7):

- SC: ``tokenizer(text + eos, add_special_tokens=False, truncation=True, max_length=2028)``
- TC: ``tokenizer(" ".join(tokens) + eos, add_special_tokens=False, ...)``
- QA: ``tokenizer("Question: {q}\\nContext: ", context + eos, add_special_tokens=False, truncation="only_second")``
- IR training pairs: ``tokenizer(text + eos, truncation=True, max_length=2028)`` (default special tokens)
- IR judged queries: ``SentenceTransformer.encode``: ``tokenizer(text, truncation=True, max_length=2048)``

Run on a rehearsal's prepared tasks (``make rehearsal`` first):

    python -m tests.encodeval_calls --workdir rehearsal --configfile config/paper.yaml config/rehearsal.yaml

Prints one line per dataset and input (first and last five ids of each side) and exits 1 if
any differs. ``tests/test_rehearsal.py`` checks the same on every rehearsal.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

from transformers import AutoTokenizer

from pipeline.configure import read_configs, resolve
from pipeline.finetune.task_data import read_documents, read_task
from pipeline.finetune.task_types import TaskContext, get_task_type
from pipeline.tokenization.saved import load_saved_tokenizer

SENTENCE_TRANSFORMERS_CAP = 2048


def encodeval_ids(tokenizer, task_type: str, row: dict, max_length: int, split: str) -> list[int]:
    """The ids EncodEval's code gives ``row`` (a prepared row of ``task_type``; ``split``: train or test)."""
    eos = tokenizer.eos_token
    if task_type == "sequence_classification":
        return tokenizer(row["text"] + eos, add_special_tokens=False, truncation=True, max_length=max_length)["input_ids"]
    if task_type == "token_classification":
        return tokenizer(" ".join(row["tokens"]) + eos, add_special_tokens=False, truncation=True, max_length=max_length)["input_ids"]
    if task_type == "qa_token_tagging":
        question = f"Question: {row['question']}\nContext: "
        encoded = tokenizer(question, row["context"] + eos, add_special_tokens=False, truncation="only_second", max_length=max_length)
        return encoded["input_ids"]
    if task_type == "retrieval" and split == "train":
        return tokenizer(row["query"] + eos, truncation=True, max_length=max_length)["input_ids"]
    if task_type == "retrieval":
        return tokenizer(row["query"], truncation=True, max_length=SENTENCE_TRANSFORMERS_CAP)["input_ids"]
    raise ValueError(f"no EncodEval call written out for {task_type!r}")


def harness_ids(example, task_type: str) -> list[int]:
    return example.query_ids if task_type == "retrieval" else example.input_ids


def comparisons(workdir: Path, configfiles: list[str]) -> Iterator[tuple[str, str, list[int], list[int]]]:
    """(task, split, ours, EncodEval's) for the first train row (IR: its training pair's query) and
    the first test row of every fine-tuned task of the config."""
    data = read_configs(configfiles)
    if data.get("hub_mirror"):  # relative to the run's directory
        data["hub_mirror"] = str(workdir / data["hub_mirror"])
    config = resolve(data, "config").config
    tokenizer = load_saved_tokenizer(workdir / "results" / "tokenizer")  # ours: its own framing (<bos> $A <eos>)
    # EncodEval's: the checkpoint's tokenizer as it ships (Llama-3's post-processor adds <|begin_of_text|> only)
    study_tokenizer = AutoTokenizer.from_pretrained(config.tokenizer.ready_made.path, local_files_only=True)
    for name in config.finetuning.tasks:
        spec, task_dir = config.tasks[name], workdir / "results" / "data" / "tasks" / name
        stats, rows = read_task(task_dir)
        context = TaskContext(spec, stats, tokenizer, "bidirectional", "mlm", config.finetuning.input_format, read_documents(task_dir))
        task_type = get_task_type(spec.type)(context)
        for split in ("train", "test") if spec.type == "retrieval" else ("test",):
            row = rows[split][0]
            (example,) = task_type.encode([row])
            yield name, split, harness_ids(example, spec.type), encodeval_ids(study_tokenizer, spec.type, row, spec.max_length, split)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("rehearsal"))
    parser.add_argument("--configfile", nargs="+", default=["config/paper.yaml", "config/rehearsal.yaml"])
    args = parser.parse_args(argv)
    differing = 0
    print(f"{'task':10} {'split':6} {'tokens':>6}  {'first five':34} {'last five':40} EncodEval's")
    for name, split, ours, theirs in comparisons(args.workdir, args.configfile):
        same = ours == theirs
        differing += not same
        print(f"{name:10} {split:6} {len(ours):>6}  {str(ours[:5]):34} {str(ours[-5:]):40} {'same' if same else f'differs: {theirs}'}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
