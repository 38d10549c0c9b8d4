"""``python -m pipeline train-tokenizer``: a byte-level BPE trained on the pretraining corpus.

Trained with `tokenizers` (seconds on CPU, no hub) and saved as a
``PreTrainedTokenizerFast`` so ``AutoTokenizer.from_pretrained(dir)`` loads it.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast

from pipeline import strict
from pipeline.config import TokenizerSpec
from pipeline.files import atomic_path, read_jsonl
from pipeline.provenance import write_provenance
from pipeline.tokenization.special_tokens import BOS, EOS, MASK, PAD, UNK, special_token_list

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", required=True, help="JSON of the tokenizer section")
    parser.add_argument("--corpus", required=True, help="train.jsonl of the pretraining corpus")
    parser.add_argument("--out", required=True, help="output directory")


def train_tokenizer(texts: list[str], spec: TokenizerSpec) -> PreTrainedTokenizerFast:
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
    # Fine-tuning inputs are framed <s> text </s>; pretraining packs raw text + </s> itself.
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
        additional_special_tokens=specials[5:],
    )


def run(args: argparse.Namespace) -> None:
    spec = strict.parse_json(TokenizerSpec, args.spec, "tokenizer")
    texts = [row["text"] for row in read_jsonl(args.corpus)]
    log.info("training a %d-token BPE on %d documents", spec.vocab_size, len(texts))
    tokenizer = train_tokenizer(texts, spec)
    with atomic_path(args.out) as out:
        tokenizer.save_pretrained(out)
        write_provenance(out, strict.to_plain(spec), {"corpus": args.corpus})
    log.info("saved %s (vocab %d)", Path(args.out), len(tokenizer))
