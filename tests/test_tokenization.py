"""Tokenizer: loadable by AutoTokenizer, specials where objectives expect them; packing is deterministic."""

from __future__ import annotations

import hashlib

import numpy as np

from pipeline.__main__ import main
from pipeline.files import read_json
from pipeline.tokenization.special_tokens import SpecialIds


def test_specials_take_the_lowest_ids_and_sentinels_count_down(tokenizer):
    special = SpecialIds.from_tokenizer(tokenizer)
    assert (special.pad, special.bos, special.eos, special.mask) == (0, 1, 2, 4)
    assert special.num_special == 5 + 3 + 8 and special.vocab_size == len(tokenizer) == 400
    assert special.modes == (5, 6, 7)  # UL2's <nlu> <nlg> <s2s>
    assert special.sentinels == (15, 14, 13, 12, 11, 10, 9, 8)  # <extra_id_0> has the highest special id, as in T5
    assert tokenizer.convert_ids_to_tokens(list(special.sentinels)) == [f"<extra_id_{i}>" for i in range(8)]
    encoded = tokenizer("The committee met on Tuesday.")["input_ids"]
    assert encoded[0] == special.bos and encoded[-1] == special.eos
    assert min(encoded[1:-1]) >= special.num_special
    assert tokenizer.decode(encoded, skip_special_tokens=True) == "The committee met on Tuesday."


def test_packing_is_deterministic_and_separates_documents(tokens_dir, tokenizer_dir, tokenizer, tmp_path):
    meta = read_json(tokens_dir / "meta.json")
    again = tmp_path / "again"
    assert (
        main(
            ["pack", "--corpus", str(tokens_dir.parent / "corpus"), "--shard", "1", "--tokenizer", str(tokenizer_dir), "--out", str(again)]
        )
        == 0
    )
    assert read_json(again / "meta.json") == read_json(tokens_dir / "shards" / "1" / "meta.json")
    [segment] = meta["splits"]["heldout"]["segments"]  # the fixture's held-out texts are shard 1's
    assert segment["file"] == "shards/1/heldout-source-0.bin"
    assert (again / "heldout-source-0.bin").read_bytes() == (tokens_dir / segment["file"]).read_bytes()
    tokens = np.fromfile(tokens_dir / segment["file"], dtype=meta["dtype"])
    assert len(tokens) == meta["splits"]["heldout"]["num_tokens"]
    assert int((tokens == tokenizer.eos_token_id).sum()) == meta["splits"]["heldout"]["num_documents"] == 12
    assert tokens[-1] == tokenizer.eos_token_id


def test_tokens_are_written_a_batch_at_a_time_with_the_same_bytes_as_one_pass(tokenizer, tmp_path, monkeypatch):
    """Streaming the corpus changes only memory: every batch size writes the bytes of
    ``tokens(doc) + [eos]`` per document, back to back, and the hash of those bytes."""
    from pipeline.tokenization import pack

    texts = ["The committee met on Tuesday.", "", "Rain fell on the valley; the river rose.", "A third, short one."]
    expected = np.concatenate(
        [np.asarray([*tokenizer(t, add_special_tokens=False)["input_ids"], tokenizer.eos_token_id], dtype=np.uint16) for t in texts]
    )
    written = {}
    for batch in (1, 3, 512):
        monkeypatch.setattr(pack, "ENCODE_BATCH_DOCUMENTS", batch)
        path = tmp_path / f"batch-{batch}.bin"
        counts = pack.write_tokens(iter(texts), tokenizer.backend_tokenizer, tokenizer.eos_token_id, np.dtype(np.uint16), path)
        assert counts == (len(texts), len(expected), hashlib.sha256(expected.tobytes()).hexdigest())
        written[batch] = path.read_bytes()
    assert written[1] == written[3] == written[512] == expected.tobytes()


def test_a_reservoir_sample_is_uniform_reproducible_and_in_stream_order():
    from pipeline.config import TokenizerSample
    from pipeline.tokenization.train import reservoir_sample

    stream = [f"document {i}" for i in range(10)]
    assert reservoir_sample(iter(stream[:3]), TokenizerSample(documents=5)) == stream[:3]
    sample = reservoir_sample(iter(stream), TokenizerSample(documents=4, seed=7))
    assert sample == reservoir_sample(iter(stream), TokenizerSample(documents=4, seed=7)) and len(sample) == 4
    assert sample == sorted(sample, key=stream.index)
    # Each document is kept with probability 4/10: over 2,000 seeds every count lies within
    # 5 standard deviations (sqrt(2000 x 0.4 x 0.6) = 21.9) of 800.
    counts = {text: 0 for text in stream}
    for seed in range(2000):
        for text in reservoir_sample(iter(stream), TokenizerSample(documents=4, seed=seed)):
            counts[text] += 1
    assert all(abs(count - 800) < 5 * 21.9 for count in counts.values()), counts


def test_train_tokenizer_records_what_it_trained_on(tmp_path):
    """The whole corpus or a sample of it: provenance says how many documents and characters, and their hash."""
    import json

    from tests.conftest import corpus_texts, write_corpus

    texts = corpus_texts(copies=4)
    corpus = write_corpus(tmp_path / "corpus", texts, ["A held-out text the tokenizer never sees."])
    trained_on = {}
    for name, sample in (("whole", None), ("sample", {"documents": 10, "seed": 3})):
        spec = json.dumps({"vocab_size": 300, "min_frequency": 2, "num_sentinel_tokens": 4, "training_sample": sample})
        assert main(["train-tokenizer", "--spec", spec, "--corpus", str(corpus), "--out", str(tmp_path / name)]) == 0
        trained_on[name] = read_json(tmp_path / name / "provenance.json")["trained_on"]
    whole_digest = hashlib.sha256(b"".join(t.encode() + b"\0" for t in texts)).hexdigest()
    assert trained_on["whole"] == {"documents": len(texts), "characters": sum(map(len, texts)), "sha256": whole_digest}
    assert trained_on["sample"]["documents"] == 10 and trained_on["sample"]["characters"] < trained_on["whole"]["characters"]
