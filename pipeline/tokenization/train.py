"""``python -m pipeline train-tokenizer``: a byte-level BPE trained on the pretraining corpus,
or a ready-made tokenizer taken as it is (``tokenizer.ready_made``, :mod:`.ready_made`).

Trained with `tokenizers` (seconds on CPU, no hub) and saved as a
``PreTrainedTokenizerFast`` so ``AutoTokenizer.from_pretrained(dir)`` loads it. The corpus
is streamed into the trainer (its memory grows with the word counts, not the texts), or a
``tokenizer.training_sample`` of it is drawn in one pass; either way the documents, characters
and sha256 of what it trained on go into provenance.json.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast

from pipeline import strict
from pipeline.config import TokenizerSample, TokenizerSpec
from pipeline.data.corpus_files import read_corpus
from pipeline.errors import PipelineError
from pipeline.files import atomic_path
from pipeline.provenance import write_provenance
from pipeline.tokenization.ready_made import take_ready_made
from pipeline.tokenization.saved import tokenizer_files
from pipeline.tokenization.special_tokens import BOS, EOS, MASK, PAD, UNK, special_token_list

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", required=True, help="JSON of the tokenizer section")
    parser.add_argument("--corpus", help="the prepared corpus (results/data/corpus), whose train documents a BPE trains on")
    parser.add_argument("--out", required=True, help="output directory")


@dataclass
class TrainingText:
    """A fingerprint of the texts a tokenizer trained on, taken as they stream past."""

    documents: int = 0
    characters: int = 0
    digest: Any = field(default_factory=hashlib.sha256)  # hashlib's sha256 object (its type is private)

    def follow(self, texts: Iterable[str]) -> Iterator[str]:
        for text in texts:
            self.documents, self.characters = self.documents + 1, self.characters + len(text)
            self.digest.update(text.encode("utf-8") + b"\0")  # \0 ends a document, so ["ab"] and ["a", "b"] differ
            yield text

    def summary(self) -> dict[str, int | str]:
        return {"documents": self.documents, "characters": self.characters, "sha256": self.digest.hexdigest()}


def reservoir_sample(texts: Iterable[str], sample: TokenizerSample) -> list[str]:
    """``sample.documents`` texts drawn uniformly without replacement from a stream of unknown
    length in one pass (Algorithm R), returned in stream order; the whole stream if shorter."""
    rng = random.Random(sample.seed)
    kept: list[tuple[int, str]] = []
    for index, text in enumerate(texts):
        if index < sample.documents:
            kept.append((index, text))
        elif (slot := rng.randrange(index + 1)) < sample.documents:
            kept[slot] = (index, text)
    return [text for _, text in sorted(kept)]


def train_tokenizer(texts: Iterable[str], spec: TokenizerSpec) -> PreTrainedTokenizerFast:
    specials = special_token_list(spec.num_sentinel_tokens)
    tokenizer = Tokenizer(models.BPE(unk_token=UNK))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=spec.vocab_size,
        min_frequency=spec.min_frequency,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    return with_our_specials(tokenizer, spec.num_sentinel_tokens)


def with_our_specials(tokenizer: Tokenizer, num_sentinel_tokens: int) -> PreTrainedTokenizerFast:
    """``tokenizer``, whose vocabulary holds every token of ``special_token_list``, as a
    ``transformers`` tokenizer that names them in their roles and frames one text
    ``<s> text </s>`` (fine-tuning inputs; pretraining packs raw text + ``</s>`` itself)."""
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A {EOS}", special_tokens=[(BOS, tokenizer.token_to_id(BOS)), (EOS, tokenizer.token_to_id(EOS))]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        unk_token=UNK,
        mask_token=MASK,
        additional_special_tokens=special_token_list(num_sentinel_tokens)[5:],
    )


def run(args: argparse.Namespace) -> None:
    spec = strict.parse_json(TokenizerSpec, args.spec, "tokenizer")
    if spec.ready_made is not None:
        tokenizer, record = take_ready_made(spec)
        with atomic_path(args.out) as out:
            tokenizer.save_pretrained(out)
            location = Path(spec.ready_made.location)
            local = {"ready_made": location} if location.is_dir() else {}
            write_provenance(out, strict.to_plain(spec), local, outputs=tokenizer_files(out), ready_made=record)
        log.info("saved %s: %s (vocab %d) as it is, roles %s", Path(args.out), spec.ready_made.location, len(tokenizer), record["roles"])
        return
    if args.corpus is None:
        raise PipelineError("--corpus: a BPE trains on the corpus (or set tokenizer.ready_made)")
    texts: Iterable[str] = (row["text"] for row in read_corpus(args.corpus, "train"))
    if spec.training_sample is not None:
        texts = reservoir_sample(texts, spec.training_sample)
    trained_on = TrainingText()
    log.info(
        "training a %d-token BPE on %s",
        spec.vocab_size,
        "the whole corpus" if spec.training_sample is None else f"a sample of {len(texts)} documents",
    )
    tokenizer = train_tokenizer(trained_on.follow(texts), spec)
    with atomic_path(args.out) as out:
        tokenizer.save_pretrained(out)
        inputs = {"corpus_index": Path(args.corpus) / "index.json"}
        write_provenance(out, strict.to_plain(spec), inputs, outputs=tokenizer_files(out), trained_on=trained_on.summary())
    log.info("saved %s (vocab %d), trained on %s", Path(args.out), len(tokenizer), trained_on.summary())
