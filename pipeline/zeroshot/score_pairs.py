"""``python -m pipeline minimal-pairs``: one model's scores on every minimal pair, no fine-tuning.

Writes ``scores.json``: the pairs' ids and kinds, and per scoring method
(:mod:`pipeline.zeroshot.methods`) the score of each good and each bad sentence, so the
report can count wins (:mod:`pipeline.analysis.pair_outcomes`) and compare two models pair
by pair.
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from pipeline import strict
from pipeline.analysis.pair_outcomes import win_rate
from pipeline.files import atomic_path, read_jsonl, write_json
from pipeline.integrity import verify_recorded
from pipeline.model.backbone import WEIGHTS_FILE, load_language_model
from pipeline.model.numerics import use_numerics_for
from pipeline.provenance import write_provenance
from pipeline.tokenization.saved import load_saved_tokenizer
from pipeline.zeroshot.likelihood import pseudo_log_likelihood, sentence_log_likelihood
from pipeline.zeroshot.methods import ATTENTION, PSEUDO_LOG_LIKELIHOOD, scoring_methods

log = logging.getLogger(__name__)
PLL_VARIANT = "within_word_l2r"


@dataclass(frozen=True)
class MinimalPairsRunSpec:
    run: str
    objective: str  # config name, or "random"
    objective_spec: dict[str, Any] | None  # {kind: ..., ...params}; None for random init
    size: str
    pretraining_step: int | None = None  # a learning-curve checkpoint; None for the final model


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", required=True, help="JSON of the model being scored")
    parser.add_argument("--model", required=True, help="checkpoint directory (pretrained or initial weights)")
    parser.add_argument("--pairs", required=True, help="pairs.jsonl of prepare-minimal-pairs")
    parser.add_argument("--out", required=True, help="output directory for scores.json")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu", help="cpu, or cuda")


def score_sentences(method: str, model_dir: str, sentences: list[str], device: torch.device) -> list[float]:
    model = load_language_model(model_dir, ATTENTION[method]).to(device).eval()
    tokenizer = load_saved_tokenizer(model_dir)
    if method == PSEUDO_LOG_LIKELIHOOD:
        return pseudo_log_likelihood(model, tokenizer, sentences, PLL_VARIANT).tolist()
    return sentence_log_likelihood(model, tokenizer, sentences).tolist()


def run(args: argparse.Namespace) -> None:
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    use_numerics_for(device)
    spec = strict.parse_json(MinimalPairsRunSpec, args.spec, "minimal_pairs_run")
    if Path(args.pairs).is_file():  # a missing one is read_jsonl's error to name
        verify_recorded(args.pairs)
    pairs = read_jsonl(args.pairs)
    methods, not_scored = scoring_methods(spec.objective_spec)
    sentences = [pair["good"] for pair in pairs] + [pair["bad"] for pair in pairs]
    scores = {}
    for method in methods:
        both = score_sentences(method, args.model, sentences, device)
        good, bad = both[: len(pairs)], both[len(pairs) :]
        scores[method] = {"attention": ATTENTION[method], "good": good, "bad": bad}
        log.info("%s, %s: %.1f%% of %d pairs", spec.run, method, 100 * win_rate(good, bad), len(pairs))
    if not_scored:
        log.info("%s: not scored (%s)", spec.run, not_scored)
    with atomic_path(args.out) as out:
        out.mkdir()
        write_json(
            out / "scores.json",
            {
                "run": spec.run,
                "objective": spec.objective,
                "size": spec.size,
                "pretraining_step": spec.pretraining_step,
                "pll_variant": PLL_VARIANT,
                "not_scored": not_scored,
                "pair_ids": [pair["id"] for pair in pairs],
                "kinds": [pair["kind"] for pair in pairs],
                "methods": scores,
            },
        )
        inputs = {"model": Path(args.model) / WEIGHTS_FILE, "pairs": args.pairs}
        write_provenance(out, strict.to_plain(spec), inputs, outputs=[out / "scores.json"])  # the aggregate verifies it
