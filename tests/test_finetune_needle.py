"""Needle in a haystack: the LM learns a fixed answer and greedy decoding writes exactly it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pipeline.batch import collate
from pipeline.config import FinetuningSpec, NeedleSpec, TaskSpec
from pipeline.example import IGNORE, Example
from pipeline.finetune.framing import tokenize
from pipeline.finetune.sweep import Sweep
from pipeline.finetune.task_types import TaskContext, get_task_type
from pipeline.finetune.task_types.needle_in_a_haystack import MAX_NEW_TOKENS, greedy_decode
from pipeline.metrics import get_metric
from pipeline.model.backbone import encode, load_language_model
from tests.conftest import PARAGRAPHS

WORDS = " ".join(PARAGRAPHS).split()


@pytest.fixture(autouse=True)
def one_thread():
    """As the finetune stage runs (--threads 1): two threads on a busy two-core machine crawl."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def rows(n: int, offset: int) -> list[dict]:
    """Distractor snippets of varying length; the answer is always 42."""
    return [
        {
            "id": str(i),
            "context": " ".join(WORDS[i : i + 3 + i % 5]),
            "question": "The number?",
            "answer": "42",
            "length": 3 + i % 2,
            "depth": 0.5,
        }
        for i in range(offset, offset + n)
    ]


@pytest.mark.parametrize("objective_kind", ["random", "prefix_lm"])
def test_greedy_decoding_writes_the_learned_answer_and_stops(objective_kind, init_dir, tokenizer):
    task = TaskSpec(
        family="NIAH", type="needle_in_a_haystack", metric="exact_match", data=None, description="test", max_length=48, needle=NeedleSpec()
    )
    needle = get_task_type("needle_in_a_haystack")(TaskContext(task, {}, tokenizer, "bidirectional", objective_kind))
    splits = {name: needle.encode_split(rows(n, offset)) for name, n, offset in (("train", 32, 0), ("validation", 8, 40), ("test", 8, 50))}
    spec = FinetuningSpec(tasks=("n",), learning_rates=(1e-2,), seeds=(0,), batch_size=8, max_steps=40, max_epochs=100.0, eval_batch_size=3)
    sweep = Sweep(needle, needle.load_pretrained(str(init_dir)), splits, spec, get_metric("exact_match"))
    result, _ = sweep.run_point(1e-2, 0, "needle")
    assert result.test == result.test_scores["exact_match"] == 100.0
    assert result.test_scores["length=3,depth=0.5"] == result.test_scores["length=4,depth=0.5"] == 100.0
    # Decoding stops at </s>: exactly " 42" comes out, though MAX_NEW_TOKENS would allow more.
    answer = tokenize(tokenizer, [" 42"])[0]
    assert len(answer) + 1 < MAX_NEW_TOKENS
    prompts = [e.input_ids[: e.prefix_length].tolist() for e in splits["test"].examples]
    sweep.pretrained.eval()
    generated = greedy_decode(sweep.pretrained, prompts, needle.attention, tokenizer.pad_token_id, tokenizer.eos_token_id, MAX_NEW_TOKENS)
    assert generated == [answer] * len(prompts)


@torch.no_grad()
def reencoding_decode(model, prompts: list[list[int]], attention: str, pad_id: int, steps: int) -> list[list[int]]:
    """The oracle: each step re-encodes every whole sequence with the training forward (no cache)."""
    sequences = [list(p) for p in prompts]
    for _ in range(steps):
        batch = collate(
            [Example(np.asarray(s), np.full(len(s), IGNORE), prefix_length=len(p)) for s, p in zip(sequences, prompts)], attention, pad_id
        )
        hidden = encode(model, batch)  # (B, L, H)
        last = hidden[torch.arange(len(sequences)), torch.tensor([len(s) - 1 for s in sequences])]
        for sequence, token in zip(sequences, model.lm_head(last).argmax(-1).tolist()):
            sequence.append(token)
    return [s[len(p) :] for s, p in zip(sequences, prompts)]


@pytest.mark.parametrize("attention", ["causal", "prefix"])
def test_cached_decoding_matches_reencoding_prompts_of_different_lengths(attention, init_dir, tokenizer):
    model = load_language_model(init_dir, attention).eval()
    with torch.no_grad():  # sharpen the untrained attention, so that positions and masks change the argmax
        for layer in model.model.layers:
            layer.self_attn.q_proj.weight.mul_(30)
            layer.self_attn.k_proj.weight.mul_(30)
    prompts = tokenize(tokenizer, [" ".join(WORDS[i : i + 2 + 3 * i]) for i in range(5)])  # 2 to 14 words: much padding
    eos = -1  # an untrained model should not stop: every step of both decoders is compared
    assert greedy_decode(model, prompts, attention, tokenizer.pad_token_id, eos, 6) == reencoding_decode(
        model, prompts, attention, tokenizer.pad_token_id, 6
    )
