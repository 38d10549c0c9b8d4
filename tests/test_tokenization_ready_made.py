"""A ready-made tokenizer (Llama-3's, at paper scale) taken as it is: same vocabulary, same
ids, the same tokens for any text; our roles on its own or its reserved tokens; and a
pretraining run that reads it, with its specials at the top of the vocabulary."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoTokenizer

from pipeline.__main__ import main
from pipeline.batch import make_batch
from pipeline.files import read_json
from pipeline.objectives import parse_objective
from pipeline.tokenization.special_tokens import SpecialIds
from tests.conftest import corpus_texts, pack_corpus, pretrain_spec_json, write_corpus, write_llama_like_tokenizer

NUM_RESERVED = 30
TEXT = "Shares fell <s> sharply </s> after the warning <mask>."  # our role names, as web text


@pytest.fixture(scope="module")
def llama_like(tmp_path_factory) -> Path:
    return write_llama_like_tokenizer(tmp_path_factory.mktemp("llama_like"), NUM_RESERVED)


def take(path: Path, out: Path, num_sentinel_tokens: int = 8, vocab_size: int | None = None) -> int:
    original = AutoTokenizer.from_pretrained(path) if path.is_dir() else None
    spec = {
        "vocab_size": vocab_size or len(original),
        "num_sentinel_tokens": num_sentinel_tokens,
        "ready_made": {"path": str(path)},
    }
    return main(["train-tokenizer", "--spec", json.dumps(spec), "--out", str(out)])


@pytest.fixture(scope="module")
def adopted(llama_like, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("adopted") / "tokenizer"
    assert take(llama_like, out) == 0
    return out


def test_the_vocabulary_ids_and_tokens_of_any_text_are_the_originals(llama_like, adopted):
    original, taken = AutoTokenizer.from_pretrained(llama_like), AutoTokenizer.from_pretrained(adopted)
    assert taken.get_vocab() == original.get_vocab()
    for text in (TEXT, *corpus_texts(1)):
        ours = taken(text, add_special_tokens=False)["input_ids"]
        assert ours == original(text, add_special_tokens=False)["input_ids"]
    assert taken.convert_tokens_to_ids("<s>") is None or "<s>" not in taken.get_vocab()  # web text's <s> stays text


def test_roles_take_its_own_tokens_then_its_reserved_ones_mask_first(llama_like, adopted):
    original, taken = AutoTokenizer.from_pretrained(llama_like), AutoTokenizer.from_pretrained(adopted)
    ids = original.convert_tokens_to_ids
    special = SpecialIds.from_tokenizer(taken)
    reserved = [ids(f"<|reserved_special_token_{i}|>") for i in range(NUM_RESERVED)]
    assert (special.bos, special.eos) == (ids("<|begin_of_text|>"), ids("<|end_of_text|>"))
    assert (special.mask, special.pad) == (reserved[0], reserved[1])  # Llama-3: <mask> is 128002
    assert special.modes == tuple(reserved[3:6])  # after <unk> (reserved[2])
    assert special.sentinels == tuple(reserved[6:14])
    assert special.text_ids == range(0, ids("<|begin_of_text|>")) and special.vocab_size == len(original)
    # every reserved token, used or not, is special: never text to mask or to draw
    assert special.first_special + special.num_special == special.vocab_size
    framed = taken("the committee")["input_ids"]
    assert framed[0] == special.bos and framed[-1] == special.eos  # <bos> text <eos>, as our BPE frames it
    provenance = read_json(adopted / "provenance.json")
    record = provenance["ready_made"]
    assert record["vocab_size"] == len(original) and len(record["tokenizer_sha256"]) == 64
    assert record["roles"]["mask_token"] == ["<|reserved_special_token_0|>", reserved[0]]
    assert any(key.startswith("ready_made") for key in provenance["inputs"])


def test_mlm_on_a_vocabulary_with_specials_on_top_selects_and_draws_text_only():
    special = SpecialIds(pad=91, bos=90, eos=92, mask=93, num_special=10, vocab_size=100, sentinels=(95, 96), first_special=90)
    blocks = [np.random.default_rng(seed).integers(0, 100, size=64) for seed in range(200)]
    objective = parse_objective({"kind": "mlm", "mask_ratio": 0.5, "mask_token_fraction": 0.0, "random_token_fraction": 1.0})
    rngs = [np.random.default_rng(1000 + i) for i in range(len(blocks))]
    batch = make_batch(objective, blocks, rngs, special)
    original = torch.from_numpy(np.stack(blocks))
    labelled = batch.labels != -100
    assert labelled.any() and not labelled[original >= 90].any()
    assert batch.input_ids[labelled].max() < 90  # every replacement a text id
    with pytest.raises(ValueError, match="neither the lowest nor the highest"):
        SpecialIds(pad=50, bos=51, eos=52, mask=53, num_special=10, vocab_size=100, sentinels=(), first_special=50)


def test_a_model_pretrains_on_tokens_packed_with_it(adopted, tmp_path):
    """Pack (uint16 ids: the vocabulary is small), initialize and pretrain MLM and CLM."""
    texts = corpus_texts()
    pack_corpus(write_corpus(tmp_path / "corpus", texts[:-12], texts[-12:]), adopted, tmp_path / "tokens")
    meta = read_json(tmp_path / "tokens" / "meta.json")
    [segment] = meta["splits"]["heldout"]["segments"]
    packed = np.fromfile(tmp_path / "tokens" / segment["file"], dtype=meta["dtype"])
    end_of_text = AutoTokenizer.from_pretrained(adopted).convert_tokens_to_ids("<|end_of_text|>")
    assert int((packed == end_of_text).sum()) == 12 and packed[-1] == end_of_text  # each document closed by its EOS
    size = {"num_layers": 1, "hidden_size": 32, "num_heads": 2, "num_kv_heads": 1, "ffn_size": 64}
    init = tmp_path / "init"
    assert (
        main(
            ["initialize", "--size", json.dumps(size), "--max-length", "64", "--seed", "0", "--tokenizer", str(adopted), "--out", str(init)]
        )
        == 0
    )
    for objective in ({"kind": "mlm", "mask_ratio": 0.4}, {"kind": "clm"}):
        out = tmp_path / objective["kind"]
        arguments = ["--tokens", str(tmp_path / "tokens"), "--init", str(init), "--work-dir", str(out / "work"), "--out", str(out / "run")]
        assert main(["pretrain", "--spec", pretrain_spec_json(objective, budget_steps=4), *arguments]) == 0
        with open(out / "run" / "log.csv") as handle:
            [last] = list(csv.DictReader(handle))
        assert np.isfinite([float(last["loss"]), float(last["heldout_loss"])]).all()


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("vocab_size", "error: tokenizer.vocab_size: 999, but '{path}' has {size} tokens; set it to {size}\n"),
        (
            "sentinels",
            "error: tokenizer.ready_made.reserved: '{path}' has 30 unused special tokens containing 'reserved', and 46 roles need one (its "
            "missing roles and 40 sentinels)\n",
        ),
        ("missing", "error: tokenizer.ready_made.path: '{path}': no such directory (a hub id has the form owner/name)\n"),
    ],
)
def test_a_tokenizer_that_cannot_serve_is_a_one_line_error_and_no_output(case, message, llama_like, tmp_path, capsys):
    out = tmp_path / "tokenizer"
    path = tmp_path / "absent" if case == "missing" else llama_like
    if case == "missing":
        code = take(path, out, vocab_size=400)
    else:
        code = take(path, out, **({"vocab_size": 999} if case == "vocab_size" else {"num_sentinel_tokens": 40}))
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(message.format(path=path, size=len(AutoTokenizer.from_pretrained(llama_like))))
    assert err.count("\n") == 1 and not out.exists()
