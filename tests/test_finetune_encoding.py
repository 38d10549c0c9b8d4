"""Task types' encoding and decoding, checked by hand: input framing, word/sub-token
alignment, QA answer placement and span choice, retrieval ranking and loss, bf16 autocast."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pipeline.batch import pad_batch
from pipeline.config import TaskSpec
from pipeline.example import IGNORE
from pipeline.finetune.framing import frame_truncated, truncate_longest_first
from pipeline.finetune.sweep import autocast
from pipeline.finetune.task_data import EncodedSplit
from pipeline.finetune.task_types import TaskContext, get_task_type
from pipeline.finetune.task_types.extractive_qa import NULL, Answer, ExtractiveQA, answer_text, best_span, encode_qa, gold_positions
from pipeline.finetune.task_types.retrieval import in_batch_negatives_loss, rank_documents
from pipeline.finetune.task_types.token_classification import majority_tag, token_words
from pipeline.metrics import get_metric

BOS, EOS = 1, 2


def context_of(tokenizer, task_type: str, max_length: int = 64, labels=("B-NAME", "I-NAME", "O"), input_format="bos_eos") -> TaskContext:
    task = TaskSpec(family="TC", type=task_type, metric="span_f1", data=None, description="test", max_length=max_length)
    return TaskContext(task, {"labels": list(labels)}, tokenizer, "bidirectional", "random", input_format)


# ------------------------------------------------------------------------------ framing


def test_pairs_are_framed_and_the_longest_segment_truncated_first():
    assert frame_truncated([[10, 11], [20]], BOS, EOS, 10) == [BOS, 10, 11, EOS, 20, EOS]
    assert [len(s) for s in truncate_longest_first([[0] * 10, [0] * 3], 8)] == [5, 3]  # the short one survives whole
    assert [len(s) for s in truncate_longest_first([[0] * 10, [0] * 9], 8)] == [4, 4]
    assert frame_truncated([list(range(10, 20)), [20, 21]], BOS, EOS, 8) == [BOS, 10, 11, 12, EOS, 20, 21, EOS]
    assert frame_truncated([list(range(10, 20))], BOS, EOS, 5) == [BOS, 10, 11, 12, EOS]


def test_sentence_pairs_use_both_texts(tokenizer):
    rows = [{"text": "The team won", "label": 0}, {"text": "The team won", "text_pair": "the match", "label": 1}]
    a, b = (tokenizer(text, add_special_tokens=False)["input_ids"] for text in ("The team won", "the match"))
    sc = get_task_type("sequence_classification")(context_of(tokenizer, "sequence_classification", max_length=64))
    single, pair = sc.encode(rows)
    assert single.input_ids == tokenizer("The team won")["input_ids"]  # the tokenizer's own <s> text </s>
    assert pair.input_ids == [BOS, *a, EOS, *b, EOS] and pair.label == 1
    assert len(a) > len(b)  # so a 2 * len(b) token budget cuts only a
    short = get_task_type("sequence_classification")(context_of(tokenizer, "sequence_classification", max_length=2 * len(b) + 3))
    assert short.encode(rows)[1].input_ids == [BOS, *a[: len(b)], EOS, *b, EOS]


def test_the_study_s_format_is_text_and_eos_without_a_leading_bos(tokenizer):
    """finetuning.input_format: eos (EncodEval's text + eos): the same segments, no <s>, one
    more token of text in the same budget."""
    assert frame_truncated([[10, 11], [20]], None, EOS, 10) == [10, 11, EOS, 20, EOS]
    assert frame_truncated([list(range(10, 20))], None, EOS, 5) == [10, 11, 12, 13, EOS]
    sc = get_task_type("sequence_classification")(context_of(tokenizer, "sequence_classification", input_format="eos"))
    assert sc.encode([{"text": "The team won", "label": 0}])[0].input_ids == [
        *tokenizer("The team won", add_special_tokens=False)["input_ids"],
        EOS,
    ]
    example = encode_qa(QUESTION, CONTEXT_IDS, OFFSETS, CONTEXT, (8, 11), (None, EOS), 64)  # "Bob"
    assert example.input_ids == [10, 11, EOS, 20, 21, 22, 23, 24, EOS]
    assert (example.context_start, example.start, example.end) == (3, 5, 5) and answer_text(example, (5, 5)) == "Bob"


# --------------------------------------------------------------------- token classification


def test_each_sub_token_s_word_by_hand():
    # " ".join(["EU", "rejects", "German"]) = "EU rejects German"; byte-level BPE puts the
    # space before a word into the word's first token: "E" "U" " rej" "ects" " G" "erman".
    words = ["EU", "rejects", "German"]
    offsets = [(0, 1), (1, 2), (2, 6), (6, 10), (10, 12), (12, 17)]
    assert token_words(words, offsets) == [0, 0, 1, 1, 2, 2]
    # A bare space token (the BPE could not merge it) belongs to the word after it, as in EncodEval's
    # offset walk, or (BERT's labelling) to none; truncation drops "German"; a (0, 0) span (a special
    # token's) and one past the text belong to none.
    assert token_words(words, [(0, 2), (2, 3), (3, 10)]) == [0, 1, 1]
    assert token_words(words, [(0, 2), (2, 3), (3, 10)], spaces_to_next_word=False) == [0, -1, 1]
    assert token_words(words, [(0, 0), (0, 2), (2, 10), (17, 20)]) == [-1, 0, 1, -1]


def test_tags_sit_on_first_subtokens_and_predictions_are_per_word(tokenizer):
    tc = get_task_type("token_classification")(context_of(tokenizer, "token_classification", max_length=10))
    words = ["the", "committee", "met", "Anna", "Smith", "on", "tuesday", "to", "discuss", "the", "budget"]
    (example,) = tc.encode([{"tokens": words, "tags": [2, 2, 2, 0, 1, 2, 2, 2, 2, 2, 2]}])
    assert len(example.input_ids) == 10 and example.input_ids[0] == BOS and example.input_ids[-1] == EOS  # truncated
    kept = [positions[0] for positions in example.word_positions if positions]
    assert kept == sorted(kept) and example.word_positions[len(kept) :] == [[]] * (len(words) - len(kept))
    for word, position in zip(words, kept):
        assert word.startswith(tokenizer.decode(example.input_ids[position]).strip())
    labelled = {p: label for p, label in enumerate(example.labels) if label != IGNORE}
    assert labelled == {p: tag for p, tag in zip(kept, [2, 2, 2, 0, 1, 2, 2, 2, 2, 2, 2])}
    assert tc.references([{"tokens": words[:2], "tags": [0, 2]}]) == [["B-NAME", "O"]]


def test_the_study_s_tagging_labels_every_sub_token_and_votes_per_word(tokenizer):
    """input_format eos (EncodEval's): " ".join(words) + eos, no <s>, every sub-token labelled
    with its word's tag, a word predicted by the majority of its sub-tokens."""
    tc = get_task_type("token_classification")(context_of(tokenizer, "token_classification", input_format="eos"))
    words = ["Anna", "Smithsonianesque", "met"]
    (example,) = tc.encode([{"tokens": words, "tags": [0, 1, 2]}])
    assert example.input_ids == [*tokenizer(" ".join(words), add_special_tokens=False)["input_ids"], EOS]
    assert len(example.word_positions[1]) > 1  # a long word of several sub-tokens
    assert {p: example.labels[p] for positions in example.word_positions for p in positions} == {
        p: tag for positions, tag in zip(example.word_positions, [0, 1, 2]) for p in positions
    }
    assert example.labels[-1] == IGNORE  # eos carries none
    best = [2] * len(example.input_ids)
    first, *rest = example.word_positions[1]
    best[first] = 0  # the first sub-token says B-NAME, the others I-NAME: the majority wins
    for p in rest:
        best[p] = 1
    assert tc.word_tag(best, example.word_positions[1], ["B-NAME", "I-NAME", "O"]) == "I-NAME"
    assert majority_tag([1, 0, 0]) == 0 and majority_tag([2, 2, 5]) == 2
    # ties as EncodEval's max(set(votes), key=votes.count): the set's order, not the votes' (16 before 3
    # in a set of {3, 16}: 16 % 8 = 0 < 3), so the earliest vote does not decide
    assert majority_tag([0, 1]) == majority_tag([1, 0]) == 0 and majority_tag([3, 16]) == majority_tag([16, 3]) == 16


# ------------------------------------------------------------------------------ QA

# Context "Ann met Bob at noon": tokens "Ann" " met" " Bob" " at" " noon".
CONTEXT = "Ann met Bob at noon"
CONTEXT_IDS = [20, 21, 22, 23, 24]
OFFSETS = [(0, 3), (3, 7), (7, 11), (11, 14), (14, 19)]
QUESTION = [10, 11]


def test_qa_answer_is_placed_on_context_tokens():
    example = encode_qa(QUESTION, CONTEXT_IDS, OFFSETS, CONTEXT, (8, 11), (BOS, EOS), 64)  # "Bob"
    assert example.input_ids == [BOS, 10, 11, EOS, 20, 21, 22, 23, 24, EOS]
    assert (example.context_start, example.context_end) == (4, 8)
    assert (example.start, example.end) == (6, 6)
    assert answer_text(example, (example.start, example.end)) == "Bob"
    both = encode_qa(QUESTION, CONTEXT_IDS, OFFSETS, CONTEXT, (8, 14), (BOS, EOS), 64)  # "Bob at"
    assert (both.start, both.end) == (6, 7) and answer_text(both, (6, 7)) == "Bob at"
    unanswerable = encode_qa(QUESTION, CONTEXT_IDS, OFFSETS, CONTEXT, None, (BOS, EOS), 64)
    assert (unanswerable.start, unanswerable.end) == (NULL, NULL)


def test_qa_answer_truncated_away_trains_towards_no_answer():
    # max_length 8 keeps 8 - 2 question - 3 specials = 3 context tokens: "Ann met Bob".
    kept = encode_qa(QUESTION, CONTEXT_IDS, OFFSETS, CONTEXT, (8, 11), (BOS, EOS), 8)
    assert kept.input_ids == [BOS, 10, 11, EOS, 20, 21, 22, EOS] and (kept.start, kept.end) == (6, 6)
    cut = encode_qa(QUESTION, CONTEXT_IDS, OFFSETS, CONTEXT, (15, 19), (BOS, EOS), 8)  # "noon"
    assert (cut.start, cut.end) == (NULL, NULL)
    partly_cut = encode_qa(QUESTION, CONTEXT_IDS, OFFSETS, CONTEXT, (8, 14), (BOS, EOS), 8)  # "Bob at": "at" is gone
    assert (partly_cut.start, partly_cut.end) == (NULL, NULL)


def test_best_span_respects_order_length_context_and_null():
    example = encode_qa(QUESTION, CONTEXT_IDS, OFFSETS, CONTEXT, None, (BOS, EOS), 64)
    start, end = torch.zeros(10), torch.zeros(10)
    start[6], end[7] = 5.0, 4.0  # "Bob at": 9
    start[1], end[2] = 50.0, 50.0  # the question is no answer
    start[8], end[5] = 6.0, 6.0  # (8, 5) would score 12, but ends before it starts
    assert best_span(start, end, example.context_start, example.context_end) == (6, 7)
    assert answer_text(example, (6, 7)) == "Bob at"
    start[NULL], end[NULL] = 4.0, 4.0  # null 8 < 9: still the span
    assert best_span(start, end, 4, 8) == (6, 7)
    end[NULL] = 5.0  # null 9 = 9: ties go to "no answer"
    assert best_span(start, end, 4, 8) is None and answer_text(example, None) == ""
    long_start, long_end = torch.zeros(50), torch.zeros(50)
    long_start[5], long_end[40], long_end[30] = 10.0, 10.0, 1.0  # 36 tokens is too long; 26 is fine
    assert best_span(long_start, long_end, 4, 45) == (5, 30)


def test_qa_scores_texts_for_squad_and_token_positions_for_encodeval():
    """One prediction serves both QA metrics: SQuAD's compares answer texts with every gold
    text, EncodEval's the span's token positions with the first gold answer's (a truncated
    answer is "no answer", position 0, on the gold side)."""
    bob = encode_qa(QUESTION, CONTEXT_IDS, OFFSETS, CONTEXT, (8, 11), (BOS, EOS), 64)  # "Bob": position 6
    cut = encode_qa(QUESTION, CONTEXT_IDS, OFFSETS, CONTEXT, (15, 19), (BOS, EOS), 8)  # "noon", truncated away
    assert gold_positions(bob) == [6] and gold_positions(cut) == []
    split = EncodedSplit(rows=[{}, {}], examples=[bob, cut], lengths=[10, 8], references=[["Bob"], ["noon"]])
    predictions = [Answer("Bob at", (6, 7)), Answer("", ())]
    qa = ExtractiveQA.__new__(ExtractiveQA)  # metric_inputs reads neither the tokenizer nor the task
    assert qa.metric_inputs(get_metric("qa_token_position_f1"), split, predictions) == ([[6, 7], []], [[6], []])
    assert qa.metric_inputs(get_metric("squad_v2"), split, predictions) == (["Bob at", ""], [["Bob"], ["noon"]])
    positions = qa.scores(get_metric("qa_token_position_f1"), split, predictions)["f1"]
    assert positions == 100 * (2 * 1 / (2 + 1) + 1.0) / 2  # the "no answer" against the truncated gold scores 1
    words = qa.scores(get_metric("squad_v2"), split, predictions)["f1"]
    assert words == 100 * (2 / 3 + 0.0) / 2  # word F1 of "Bob at" vs "Bob"; "" vs "noon" is 0


# ------------------------------------------------------------------------------ retrieval


def test_documents_are_ranked_by_similarity():
    queries = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    documents = torch.tensor([[0.9, 0.1], [0.1, 0.9], [0.7, 0.7]])
    ranked = rank_documents(queries, documents, ["a", "b", "c"])
    assert [r["ids"] for r in ranked] == [["a", "c", "b"], ["b", "c", "a"]]
    assert ranked[0]["scores"] == pytest.approx([0.9, 0.7, 0.1])  # the scores that tell ties apart
    assert [r["ids"] for r in rank_documents(queries, documents, ["a", "b", "c"], depth=1)] == [["a"], ["b"]]


def test_the_study_s_ir_evaluation_encodes_as_sentence_transformers_does(tokenizer):
    """input_format eos: training pairs are text + eos, no <bos> (the study's writer, as every
    task's); judged queries and documents are ranked as SentenceTransformer.encode feeds them,
    the tokenizer's <bos> first and no eos."""
    retrieval = get_task_type("retrieval")(context_of(tokenizer, "retrieval", input_format="eos"))
    text = tokenizer("Query: who met", add_special_tokens=False)["input_ids"]
    (pair,) = retrieval.encode([{"id": "q0", "query": "Query: who met", "document": "Document: Anna"}])
    assert pair.query_ids == [*text, EOS]
    (judged,) = retrieval.encode([{"id": "q0", "query": "Query: who met", "relevant": ["d0"]}])
    assert judged.query_ids == [BOS, *text] and retrieval.evaluated(["Document: Anna"])[0][0] == BOS


def test_in_batch_negatives_loss_rewards_matching_pairs():
    embeddings = torch.nn.functional.normalize(torch.randn(8, 16, generator=torch.Generator().manual_seed(0)), dim=-1)
    matched = in_batch_negatives_loss(embeddings, embeddings)
    shuffled = in_batch_negatives_loss(embeddings, embeddings.roll(1, dims=0))
    assert matched < 0.5 < shuffled  # cosine 1 / 0.05 = logit 20 on the diagonal


def test_bf16_autocast_changes_matmuls_only_when_asked():
    layer = torch.nn.Linear(4, 4)
    with autocast("bf16", torch.device("cpu")):
        assert layer(torch.ones(1, 4)).dtype == torch.bfloat16
    with autocast("fp32", torch.device("cpu")):
        assert layer(torch.ones(1, 4)).dtype == torch.float32


# One row of each task type the paper config fine-tunes, and the input(s) its encoding builds.
FORMAT_ROWS = {
    "sequence_classification": ({"text": "The team won", "label": 0}, lambda e: [e.input_ids]),
    "token_classification": ({"tokens": ["Anna", "met", "Bob"], "tags": [0, 2, 0]}, lambda e: [e.input_ids]),
    "extractive_qa": (
        {"question": "Who met?", "context": "Anna met Bob", "answers": {"text": ["Anna"], "answer_start": [0]}},
        lambda e: [e.input_ids],
    ),
    "retrieval": ({"id": "q0", "query": "who met", "document": "Anna met Bob"}, lambda e: [e.query_ids, e.document_ids]),
}


@pytest.mark.parametrize("task_type", sorted(FORMAT_ROWS))
@pytest.mark.parametrize("input_format", ["bos_eos", "eos"])
def test_every_task_type_starts_and_ends_its_input_as_the_format_says(tokenizer, task_type, input_format):
    """bos_eos: <s> ... </s>; eos (the study's): no <s>, ... </s>, for every task type's training
    inputs, retrieval's pairs included."""
    row, inputs_of = FORMAT_ROWS[task_type]
    encoder = get_task_type(task_type)(context_of(tokenizer, task_type, input_format=input_format))
    for ids in inputs_of(encoder.encode([row])[0]):
        assert (ids[0] == BOS) == (input_format == "bos_eos")
        assert ids[-1] == EOS and BOS not in ids[1:]


def test_the_study_s_qa_tags_every_answer_token_after_its_question_template(tokenizer):
    """qa_token_tagging (EncodEval's QA): "Question: {q}\\nContext: " + context + eos, no special
    tokens added, label 1 on each token of the first answer; an answer cut by truncation is none."""
    row = {"question": "Who met Ann?", "context": "Ann met Bob at noon", "answers": {"text": ["Bob"], "answer_start": [8]}}
    prefix = tokenizer("Question: Who met Ann?\nContext: ", add_special_tokens=False)["input_ids"]
    passage = tokenizer("Ann met Bob at noon", add_special_tokens=False)["input_ids"]
    qa = get_task_type("qa_token_tagging")(context_of(tokenizer, "qa_token_tagging", max_length=64, input_format="eos"))
    (example,) = qa.encode([row])
    assert example.input_ids == [*prefix, *passage, EOS] and BOS not in example.input_ids
    assert tokenizer.decode([example.input_ids[p] for p in example.gold]).strip() == "Bob"
    assert example.gold == list(range(example.gold[0], example.gold[-1] + 1)) and example.gold[0] > len(prefix)
    assert example.labels == [1 if p in example.gold else 0 for p in range(len(example.input_ids))]
    unanswerable = {**row, "answers": {"text": [], "answer_start": []}}
    assert qa.encode([unanswerable])[0].gold == [] and set(qa.encode([unanswerable])[0].labels) == {0}
    short = get_task_type("qa_token_tagging")(context_of(tokenizer, "qa_token_tagging", max_length=len(prefix) + 2, input_format="eos"))
    (cut,) = short.encode([{**row, "answers": {"text": ["noon"], "answer_start": [15]}}])
    assert cut.input_ids == [*prefix, *passage[:2]] and cut.gold == []  # the context and eos cut from the end, the answer with them


@pytest.mark.parametrize("as_array", [False, True])
def test_pad_batch_right_pads_to_the_longest_row_and_masks_the_padding(as_array):
    """Lists or numpy rows (the needle task's prompts) -> ids (B, T) long with pad_id after each row,
    mask 1 on the row's own tokens, both on the asked device."""
    rows = [[5, 6, 7], [8], [9, 10, 11, 12]]
    ids, mask = pad_batch([np.asarray(row) for row in rows] if as_array else rows, pad_id=0)
    assert ids.tolist() == [[5, 6, 7, 0], [8, 0, 0, 0], [9, 10, 11, 12]]
    assert mask.tolist() == [[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1]]
    assert ids.dtype == mask.dtype == torch.long
    on_meta = pad_batch(rows, pad_id=0, device="meta")
    assert [tensor.device.type for tensor in on_meta] == ["meta", "meta"]
