"""The zero-shot family: corruptions, pair building, and the two likelihood scores,
pinned on hand-computed cases, against minicons, and at chance for random weights."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from conftest import PARAGRAPHS, write_corpus

from pipeline.__main__ import main
from pipeline.analysis.pair_outcomes import win_rate
from pipeline.config import MinimalPairsSpec
from pipeline.data.corruptions import adjacent_swap, apply_edit, article, determiner_number, pronoun_verb_agreement
from pipeline.data.minimal_pairs import build_pairs
from pipeline.model.backbone import load_language_model
from pipeline.zeroshot.likelihood import encode_sentences, masked_copies, pseudo_log_likelihood, sentence_log_likelihood
from pipeline.zeroshot.methods import PSEUDO_LOG_LIKELIHOOD, SENTENCE_LOG_LIKELIHOOD, scoring_methods


def corrupted(kind, sentence: str) -> list[str]:
    words = sentence.split()
    return [" ".join(apply_edit(words, edit)) for edit in kind(words)]


# ------------------------------------------------------------------ corruptions


def test_adjacent_swap_swaps_only_two_different_lower_case_words():
    assert corrupted(adjacent_swap, "The cat sat, then it sat") == ["The cat sat, it then sat", "The cat sat, then sat it"]
    assert corrupted(adjacent_swap, "It is is") == []  # "It" is not lower case, and "is is" would not change


def test_article_swaps_the_form_of_the_indefinite_article():
    assert corrupted(article, "He saw a dog and an owl") == ["He saw an dog and an owl", "He saw a dog and a owl"]
    assert corrupted(article, "A man") == ["An man"]
    assert corrupted(article, "It was a 40-year-old clip") == []  # the next word must be a plain word


def test_pronoun_verb_agreement_breaks_agreement_but_not_into_the_subjunctive():
    assert corrupted(pronoun_verb_agreement, "She is here and they were there") == [
        "She are here and they were there",
        "She is here and they was there",
    ]
    assert corrupted(pronoun_verb_agreement, "if he was to go") == []  # "he were" would be a subjunctive


def test_determiner_number_needs_a_noun_after_the_determiner():
    assert corrupted(determiner_number, "this year and these results") == ["these year and these results", "this year and this results"]
    assert corrupted(determiner_number, "this will pass") == []  # "these will pass" is acceptable


def test_pairs_are_deterministic_capped_and_from_whole_sentences():
    documents = [{"id": f"d{i}", "text": text} for i, text in enumerate(PARAGRAPHS)]
    spec = MinimalPairsSpec(max_pairs_per_kind=3)
    pairs = build_pairs(documents, spec, seed=0)
    assert pairs == build_pairs(documents, spec, seed=0)
    kinds = [pair["kind"] for pair in pairs]
    assert all(kinds.count(kind) <= 3 for kind in spec.kinds) and kinds.count("adjacent_swap") == 3
    for pair in pairs:
        assert pair["good"] != pair["bad"] and pair["good"][0].isupper()
        assert len(pair["good"].split()) == len(pair["bad"].split())


def test_no_pair_of_a_requested_kind_is_an_error_naming_the_kind(tmp_path, capsys):
    corpus = write_corpus(tmp_path / "corpus", ["A training text."], ["The market rose sharply on Monday morning in London."])
    spec = json.dumps({"kinds": ["adjacent_swap", "pronoun_verb_agreement"]})
    assert main(["prepare-minimal-pairs", "--spec", spec, "--seed", "0", "--corpus", str(corpus), "--out", str(tmp_path / "out")]) == 2
    assert "pronoun_verb_agreement" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_pairs_changed_after_they_were_made_are_refused_by_the_scoring_stage(tmp_path, init_dir, capsys):
    corpus = write_corpus(tmp_path / "corpus", ["A training text."], PARAGRAPHS)
    spec = json.dumps({"kinds": ["adjacent_swap"], "max_pairs_per_kind": 5})
    assert main(["prepare-minimal-pairs", "--spec", spec, "--seed", "0", "--corpus", str(corpus), "--out", str(tmp_path / "pairs")]) == 0
    pairs = tmp_path / "pairs" / "pairs.jsonl"
    assert list(json.loads((tmp_path / "pairs" / "provenance.json").read_text())["outputs"]) == ["pairs.jsonl"]
    pairs.write_text(pairs.read_text().replace('"good"', '"bad"', 1).replace('"bad"', '"good"', 2))  # a pair turned round
    run = json.dumps({"run": "clm-micro", "objective": "clm", "objective_spec": {"kind": "clm"}, "size": "micro", "pretraining_step": None})
    capsys.readouterr()
    assert main(["minimal-pairs", "--spec", run, "--model", str(init_dir), "--pairs", str(pairs), "--out", str(tmp_path / "scores")]) == 2
    assert capsys.readouterr().err.startswith(f"error: {pairs}: sha256 ") and not (tmp_path / "scores").exists()


# ------------------------------------------------------------------ scoring


def test_within_word_l2r_masks_the_rest_of_the_word_to_the_right():
    ids, word_ids, mask = [1, 10, 11, 12, 13, 2], [None, 0, 1, 1, 2, None], 0
    assert masked_copies(ids, word_ids, mask, "within_word_l2r") == [
        ([1, 0, 11, 12, 13, 2], 1),
        ([1, 10, 0, 0, 13, 2], 2),  # "11" is scored with its word's later piece "12" masked too
        ([1, 10, 11, 0, 13, 2], 3),
        ([1, 10, 11, 12, 0, 2], 4),
    ]
    assert [copy for copy, _ in masked_copies(ids, word_ids, mask, "original")][1] == [1, 10, 0, 12, 13, 2]


@pytest.fixture()
def uniform_models(init_dir):
    """The micro backbone with a zero LM head: every token has probability 1 / V, by hand."""
    models = {}
    for attention in ("causal", "bidirectional"):
        model = load_language_model(init_dir, attention).eval()
        torch.nn.init.zeros_(model.lm_head.weight)
        models[attention] = model
    return models


def test_scores_of_a_uniform_model_are_token_counts_times_log_v(uniform_models, tokenizer):
    sentences = ["The team won the match.", "Shares fell sharply after the warning about phones."]
    ids, _ = encode_sentences(tokenizer, sentences)
    log_v = math.log(uniform_models["causal"].config.vocab_size)
    # causal: every token after <s>, </s> included; pseudo: every token but <s> and </s>
    expected_causal = [-(len(row) - 1) * log_v for row in ids]
    expected_pseudo = [-(len(row) - 2) * log_v for row in ids]
    np.testing.assert_allclose(sentence_log_likelihood(uniform_models["causal"], tokenizer, sentences), expected_causal, rtol=1e-6)
    np.testing.assert_allclose(pseudo_log_likelihood(uniform_models["bidirectional"], tokenizer, sentences), expected_pseudo, rtol=1e-6)


def test_a_constant_scorer_wins_half_the_pairs_never_more():
    assert win_rate([-3.0] * 4, [-3.0] * 4) == 0.5
    assert win_rate([-1.0, -2.0, -3.0, -3.0], [-2.0, -1.0, -3.0, -4.0]) == (1 + 0 + 0.5 + 1) / 4


def test_sentence_log_likelihood_is_the_chain_rule_token_by_token(init_dir, tokenizer):
    model = load_language_model(init_dir, "causal").eval()
    sentence = "The committee met on Tuesday."
    ids = tokenizer(sentence)["input_ids"]
    with torch.no_grad():
        expected = sum(model(input_ids=torch.tensor([ids[:t]])).logits[0, -1].log_softmax(-1)[ids[t]].item() for t in range(1, len(ids)))
    assert sentence_log_likelihood(model, tokenizer, [sentence, "A much longer sentence pads this one."])[0] == pytest.approx(
        expected, rel=1e-5
    )


@pytest.mark.parametrize("variant", ["within_word_l2r", "original"])
def test_pseudo_log_likelihood_matches_minicons(init_dir, tokenizer_dir, variant):
    scorer_module = pytest.importorskip("minicons.scorer")
    from transformers import AutoTokenizer

    model = load_language_model(init_dir, "bidirectional").eval()
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    tokenizer.cls_token, tokenizer.sep_token = tokenizer.bos_token, tokenizer.eos_token  # minicons skips these ids
    tokenizer.batch_encode_plus = tokenizer.__call__  # minicons 0.3.39 calls what transformers 5 folded into __call__
    sentences = ["The committee met on Tuesday to discuss spending.", "Critics praised the acting and the score."]
    scorer = scorer_module.MaskedLMScorer(model, device="cpu", tokenizer=tokenizer)
    reference = scorer.sequence_score(sentences, reduction=lambda scores: scores.sum(0).item(), PLL_metric=variant)
    ours = pseudo_log_likelihood(model, tokenizer, sentences, variant)
    np.testing.assert_allclose(ours, reference, rtol=1e-4)


def test_random_weights_win_about_half_the_pairs(init_dir, tokenizer):
    documents = [{"id": f"d{i}", "text": text} for i, text in enumerate(PARAGRAPHS * 4)]
    pairs = build_pairs(documents, MinimalPairsSpec(max_pairs_per_kind=400), seed=0)
    model = load_language_model(init_dir, "causal").eval()
    scores = sentence_log_likelihood(model, tokenizer, [p["good"] for p in pairs] + [p["bad"] for p in pairs])
    rate = win_rate(scores[: len(pairs)].tolist(), scores[len(pairs) :].tolist())
    assert len(pairs) >= 40 and 0.3 <= rate <= 0.7


def test_each_objective_gets_the_score_its_attention_allows():
    assert scoring_methods(None) == ((SENTENCE_LOG_LIKELIHOOD, PSEUDO_LOG_LIKELIHOOD), None)
    assert scoring_methods({"kind": "clm"}) == ((SENTENCE_LOG_LIKELIHOOD,), None)
    assert scoring_methods({"kind": "mlm", "mask_ratio": 0.3}) == ((PSEUDO_LOG_LIKELIHOOD,), None)
    assert scoring_methods({"kind": "prefix_lm"}) == ((SENTENCE_LOG_LIKELIHOOD,), None)
    methods, why = scoring_methods({"kind": "electra"})
    assert methods == () and "discriminator" in why
