"""What prepare_task does for each task type (``TaskSpec.type``).

A type says which fields a reader must give, checks and cleans them (every text field
with :func:`clean_text`, as the corpus is cleaned, so decontamination compares like with
like; or, under ``TaskSpec.raw_text``, keeps them as the source gives them, as the study
feeds them to its models), says what makes two rows duplicates, which names are numbered (class labels,
tags), what a written row looks like (the schemas in the design: ids and fields,
labels and tags as integers), what ``label_counts`` counts and the trivial baseline
stats.json reports next to the fine-tuned scores:

=====================  ====================  ==========================================
type                   label_counts counts   trivial baseline (majority_test_score)
=====================  ====================  ==========================================
sequence_classification  labels              the most frequent train label (accuracy)
token_classification   tags (tokens)         tag everything O: no spans, span F1 = 0
extractive_qa          answerable or not     always abstain: squad_v2 F1 = % unanswerable
retrieval              (nothing)             a random ranking: expected nDCG@10
needle_in_a_haystack   (length, depth) cells a uniform guess of the 4-digit number
=====================  ====================  ==========================================

A bad row is a one-line error naming the task, the row and the field.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pipeline.config import TaskSpec
from pipeline.data.needle import NUMBERS
from pipeline.data.text import clean_text, dedup_key
from pipeline.errors import PipelineError

Fields = dict[str, Any]
_TAG = re.compile(r"O|[BI]-\S+")
# Prefixes that keep the two dedup keys of a retrieval row apart.
_QUERY, _DOCUMENT = "query\0", "document\0"


@dataclass(frozen=True)
class Example:
    id: str
    group: str  # rows of one group share a split (an article); the id when the reader gives none
    split: str | None  # the source's own split, if it has them
    fields: Fields  # the type's fields, checked and cleaned


@dataclass(frozen=True)
class Baseline:
    label: str | None  # what the trivial predictor predicts, where that is one name
    score: float | None  # its test score, in the metric's points
    description: str


class RowError(PipelineError):
    """A row that breaks its type's schema: ``where`` names the task and row, and the field."""

    def __init__(self, where: str, field: str, problem: str) -> None:
        super().__init__(f"{where} field {field!r}: {problem}")


class TaskRows:
    """One task type's rows and what follows from them; subclasses override what differs.
    Everything but fine-tuning reads a type here (fine-tuning's registry,
    :mod:`pipeline.finetune.task_types`, adds the model side)."""

    fields: tuple[str, ...] = ()  # what a reader (or a hub ``fields`` map) must give, besides "id"
    # The fields of a written row that hold its text (a list of words counts as its words):
    # what decontamination keeps out of the pretraining corpus.
    text_fields: tuple[str, ...] = ()
    generative: bool = False  # answered by generating text: fine-tunes only causal and prefix-attention models
    lexical_baseline: bool = False  # the bag-of-words reference applies (one label per text)
    # The registered metrics its predictions can be scored with: the standard one first, then the
    # study's variant where EncodEval scores it otherwise (pipeline/metrics/).
    metrics: tuple[str, ...] = ()
    # The field whose names prepare_task numbers (a hub source's ``class_names`` for it fix their order).
    label_field: str | None = None

    def configured(self, spec: TaskSpec) -> TaskRows:
        """This type as ``spec`` reads its rows (a token-classification task's tagging scheme)."""
        return self

    def prepare(self, row: dict[str, Any], where: str, raw: bool = False) -> Fields | None:
        """The row's checked fields, their texts cleaned (``raw``: as the source gives them, the
        study's inputs); None when a text is empty (the row is dropped)."""
        raise NotImplementedError

    def dedup_keys(self, fields: Fields) -> tuple[str, ...]:
        """A row is a duplicate when it shares one of these keys with a row kept before it."""
        raise NotImplementedError

    def names(self, fields: Fields) -> Iterable[str]:
        """The names prepare_task numbers (in sorted order) across all rows."""
        return ()

    def written(self, fields: Fields, ids: dict[str, int]) -> dict[str, Any]:
        """The row as written to ``<split>.jsonl``, without its id."""
        return fields

    def counted(self, fields: Fields) -> Iterable[str]:
        """What ``label_counts`` counts for this row."""
        return ()

    def count_keys(self, labels: list[str], counts: Counter[str]) -> list[str]:
        """The keys of one split's ``label_counts``: every label, or what was counted."""
        return labels or sorted(counts)

    def baseline(self, train: list[Fields], test: list[Fields], labels: list[str]) -> Baseline:
        raise NotImplementedError


class SequenceClassification(TaskRows):
    """``{text, text_pair?, label}``: one text or a pair, one class label name."""

    fields = ("text", "label")
    text_fields = ("text", "text_pair")
    lexical_baseline = True
    metrics = ("accuracy",)
    label_field = "label"

    def prepare(self, row: dict[str, Any], where: str, raw: bool = False) -> Fields | None:
        fields = {"text": _text(_string(row, "text", where), raw)}
        if row.get("text_pair") is not None:
            fields["text_pair"] = _text(_string(row, "text_pair", where), raw)
        if not all(fields.values()):
            return None
        # a label is a name, cleaned as a text is whatever raw_text says ("pos ", "pos\u200b": "pos")
        label = clean_text(_string(row, "label", where))
        if not label:
            raise RowError(where, "label", f"{row['label']!r} is empty once cleaned; a label names its class")
        return {**fields, "label": label}

    def dedup_keys(self, fields: Fields) -> tuple[str, ...]:
        return ("\t".join(dedup_key(fields[f]) for f in ("text", "text_pair") if f in fields),)

    def names(self, fields: Fields) -> Iterable[str]:
        return (fields["label"],)

    def written(self, fields: Fields, ids: dict[str, int]) -> dict[str, Any]:
        return {**fields, "label": ids[fields["label"]]}

    def counted(self, fields: Fields) -> Iterable[str]:
        return (fields["label"],)

    def baseline(self, train: list[Fields], test: list[Fields], labels: list[str]) -> Baseline:
        counts = Counter(f["label"] for f in train)
        majority = min(labels, key=lambda label: (-counts[label], label))  # ties: the first name
        score = 100 * sum(f["label"] == majority for f in test) / len(test)
        return Baseline(majority, round(score, 4), f"always {majority!r}, the most frequent train label")


class TokenClassification(TaskRows):
    """``{tokens, tags}``: one tag name per token (O, B-X or I-X), kept as the source gives them.
    Under IOB2 (``scheme``) B-X opens every span and I-X continues one, so an I-X that follows
    no X is refused. Under IOB1 (raw CoNLL-2003) I-X opens a span too and B-X only separates two
    adjacent spans of one type: every sequence of well-formed tags reads as spans (conlleval's
    reading, which :mod:`pipeline.metrics.span_f1` applies to both schemes), so only names are checked."""

    fields = ("tokens", "tags")
    text_fields = ("tokens",)
    metrics = ("span_f1", "sentence_macro_f1")
    label_field = "tags"

    def __init__(self, scheme: str = "IOB2"):
        self.scheme = scheme

    def configured(self, spec: TaskSpec) -> TaskRows:
        return TokenClassification(spec.tagging_scheme or "IOB2")

    def prepare(self, row: dict[str, Any], where: str, raw: bool = False) -> Fields | None:
        tokens, tags = _string_list(row, "tokens", where), _string_list(row, "tags", where)
        if len(tokens) != len(tags):
            raise RowError(where, "tags", f"{len(tags)} tags for {len(tokens)} tokens")
        tokens = [_text(token, raw) for token in tokens]
        for number, token in enumerate(tokens):
            if not token or any(c.isspace() for c in token):
                raise RowError(where, "tokens", f"token {number} is {token!r}; a token is a non-empty word without spaces")
        for number, tag in enumerate(tags):
            if not _TAG.fullmatch(tag):
                raise RowError(where, "tags", f"tag {number} is {tag!r}; tags are {self.scheme} names: O, B-<type>, I-<type>")
            if self.scheme == "IOB2" and tag.startswith("I-") and (number == 0 or tags[number - 1][2:] != tag[2:]):
                raise RowError(
                    where,
                    "tags",
                    f"tag {number} {tag!r} does not continue a span of its type (IOB2; a source tagged IOB1 says tagging_scheme: IOB1)",
                )
        return {"tokens": tokens, "tags": tags} if tokens else None

    def dedup_keys(self, fields: Fields) -> tuple[str, ...]:
        return (dedup_key(" ".join(fields["tokens"])),)

    def names(self, fields: Fields) -> Iterable[str]:
        return fields["tags"]

    def written(self, fields: Fields, ids: dict[str, int]) -> dict[str, Any]:
        return {"tokens": fields["tokens"], "tags": [ids[tag] for tag in fields["tags"]]}

    def counted(self, fields: Fields) -> Iterable[str]:
        return fields["tags"]

    def baseline(self, train: list[Fields], test: list[Fields], labels: list[str]) -> Baseline:
        return Baseline("O", 0.0, "tag everything O: no predicted spans, span F1 0")


class ExtractiveQA(TaskRows):
    """``{question, context, answers: {text, answer_start}}`` (SQuAD v2); no answers = unanswerable."""

    fields = ("question", "context", "answers")
    text_fields = ("question", "context")
    metrics = ("squad_v2", "qa_token_position_f1")

    def prepare(self, row: dict[str, Any], where: str, raw: bool = False) -> Fields | None:
        question, context = _string(row, "question", where), _string(row, "context", where)
        answers = row["answers"]
        if not (isinstance(answers, dict) and {"text", "answer_start"} <= answers.keys()):
            raise RowError(where, "answers", f"expected {{'text': [...], 'answer_start': [...]}}, got {answers!r:.60}")
        texts, starts = answers["text"], answers["answer_start"]
        if not (isinstance(texts, list) and isinstance(starts, list) and len(texts) == len(starts)):
            raise RowError(where, "answers", "'text' and 'answer_start' must be lists of one length")
        cleaned = _text(context, raw)
        located: dict[str, list] = {"text": [], "answer_start": []}
        for text, start in zip(texts, starts, strict=True):
            # a character offset: a whole number from 0 (a negative one would slice from the end, True is 1)
            offset = isinstance(start, int) and not isinstance(start, bool) and start >= 0
            if not (isinstance(text, str) and text.strip() and offset and context[start : start + len(text)] == text):
                raise RowError(where, "answers", f"{text!r} is not the context's text at {start!r}")
            if not raw:  # the answer moved with the context's cleaning
                end = start + len(text)
                if end < len(context) and unicodedata.combining(context[end]):
                    raise RowError(
                        where,
                        "answers",
                        f"{text!r} ends inside a character of the context (a combining mark follows); answers end on whole characters",
                    )
                start += len(text) - len(text.lstrip())
                text = clean_text(text)
                start = _cleaned_offset(context, start)
                if cleaned[start : start + len(text)] != text:
                    raise RowError(where, "answers", f"{text!r} spans a line break of the context; answers lie within one line")
            located["text"].append(text)
            located["answer_start"].append(start)
        question = _text(question, raw)
        return {"question": question, "context": cleaned, "answers": located} if question and cleaned else None

    def dedup_keys(self, fields: Fields) -> tuple[str, ...]:
        return (f"{dedup_key(fields['question'])}\t{dedup_key(fields['context'])}",)

    def counted(self, fields: Fields) -> Iterable[str]:
        return ("answerable" if fields["answers"]["text"] else "unanswerable",)

    def count_keys(self, labels: list[str], counts: Counter[str]) -> list[str]:
        return ["answerable", "unanswerable"]

    def baseline(self, train: list[Fields], test: list[Fields], labels: list[str]) -> Baseline:
        unanswerable = sum(not f["answers"]["text"] for f in test)
        return Baseline("no answer", round(100 * unanswerable / len(test), 4), "always abstain: squad_v2 F1 = % unanswerable")


class QATokenTagging(ExtractiveQA):
    """The rows of extractive QA, answered as the study answers it (every answer token tagged):
    scored by its token positions only."""

    metrics = ("qa_token_position_f1",)

    def baseline(self, train: list[Fields], test: list[Fields], labels: list[str]) -> Baseline:
        unanswerable = sum(not f["answers"]["text"] for f in test)
        return Baseline("no answer", round(100 * unanswerable / len(test), 4), "always abstain: token-position F1 = % unanswerable")


class Retrieval(TaskRows):
    """``{query, document}``: the document is the query's one relevant document. Queries
    and documents are each unique, so every query has exactly one right answer. A judged
    task's validation and test rows are ``{query, relevant}`` instead, ranked against its
    judged documents (:mod:`pipeline.data.judgements`)."""

    fields = ("query", "document")
    text_fields = ("query", "document")
    metrics = ("ndcg_at_10", "encodeval_ndcg_at_10")

    def prepare(self, row: dict[str, Any], where: str, raw: bool = False) -> Fields | None:
        fields = {name: _text(_string(row, name, where), raw) for name in self.fields}
        return fields if all(fields.values()) else None

    def dedup_keys(self, fields: Fields) -> tuple[str, ...]:
        prefixes = {"query": _QUERY, "document": _DOCUMENT}
        return tuple(prefix + dedup_key(fields[name]) for name, prefix in prefixes.items() if name in fields)

    def baseline(self, train: list[Fields], test: list[Fields], labels: list[str]) -> Baseline:
        return random_ranking([{"relevant": [str(i)]} for i in range(len(test))], len(test))


def random_ranking(queries: list[Fields], num_documents: int) -> Baseline:
    """The expected standard nDCG@10 of ranking ``num_documents`` at random, for queries
    ``{relevant: [...]}``: a document is relevant at each rank with probability R/N."""

    def expected(num_relevant: int) -> float:
        ranks = range(1, min(10, num_documents) + 1)
        ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(10, num_relevant) + 1))
        return sum(num_relevant / num_documents / math.log2(rank + 1) for rank in ranks) / ideal

    score = 100 * sum(expected(len(query["relevant"])) for query in queries) / len(queries)
    return Baseline(None, round(score, 4), f"a random ranking of the {num_documents} test documents: expected nDCG@10")


class NeedleInAHaystack(TaskRows):
    """Reader rows are distractor sentences ``{text}`` in article order; prepare_task
    builds ``{context, question, answer, length, depth}`` rows from each split's (:mod:`needle`)."""

    fields = ("text",)
    text_fields = ("context", "question")  # the written rows prepare_task builds
    generative = True
    metrics = ("exact_match",)

    def prepare(self, row: dict[str, Any], where: str, raw: bool = False) -> Fields | None:
        text = _text(_string(row, "text", where), raw)
        return {"text": text} if text else None

    def dedup_keys(self, fields: Fields) -> tuple[str, ...]:
        return (dedup_key(fields["text"]),)

    def counted(self, fields: Fields) -> Iterable[str]:
        return (f"length={fields['length']},depth={fields['depth']}",)

    def baseline(self, train: list[Fields], test: list[Fields], labels: list[str]) -> Baseline:
        return Baseline(None, round(100 / (NUMBERS[1] - NUMBERS[0] + 1), 4), "a uniform guess of the 4-digit number")


RETRIEVAL_ROWS = Retrieval()
TASK_TYPES: dict[str, TaskRows] = {
    "sequence_classification": SequenceClassification(),
    "token_classification": TokenClassification(),
    "extractive_qa": ExtractiveQA(),
    "qa_token_tagging": QATokenTagging(),
    "retrieval": RETRIEVAL_ROWS,
    "needle_in_a_haystack": NeedleInAHaystack(),
}


def task_rows(spec: TaskSpec) -> TaskRows:
    """The rows type of a task, as its spec reads them."""
    return TASK_TYPES[spec.type].configured(spec)


def unmapped_fields(task_type: str, hub_fields: dict[str, str], templates: dict[str, str] | None) -> list[str]:
    """The fields of ``task_type`` a hub source gives no column for (``fields``) and no template
    builds: each would fail the task's first row, so the plan refuses it (pipeline/workflow/configure.py)."""
    return [name for name in TASK_TYPES[task_type].fields if name not in hub_fields and name not in (templates or {})]


def _string(row: dict[str, Any], field: str, where: str) -> str:
    value = row[field]
    if not isinstance(value, str):
        raise RowError(where, field, f"expected a string, got {value!r:.60}")
    return value


def _string_list(row: dict[str, Any], field: str, where: str) -> list[str]:
    value = row[field]
    if not (isinstance(value, list) and all(isinstance(item, str) for item in value)):
        raise RowError(where, field, f"expected a list of strings, got {value!r:.60}")
    return value


def _text(value: str, raw: bool) -> str:
    """A text field as the source gives it (``raw``), or cleaned as the corpus is (:func:`clean_text`)."""
    return value if raw else clean_text(value)


# A character clean_text leaves alone and no text holds (Unicode private use).
_MARK = "\ue000"


def _cleaned_offset(text: str, offset: int) -> int:
    """Where ``text[offset]`` lands in ``clean_text(text)``: cleaning the prefix up to a
    marker collapses the same spaces and lines as cleaning the whole text does."""
    return len(clean_text(text[:offset] + _MARK)) - 1
