"""``python -m pipeline initialize``: the initial weights shared by every run of a size.

Every objective starts from these exact weights, so runs differ only in attention
pattern and loss. The same checkpoint, never trained, is the randomly initialised
baseline of the fine-tuning tables.
"""

from __future__ import annotations

import argparse

from pipeline import strict
from pipeline.config import SizeSpec
from pipeline.files import atomic_path
from pipeline.model.backbone import WEIGHTS_FILE, BackboneSpec, build_language_model, save_language_model
from pipeline.provenance import write_provenance
from pipeline.tokenization.saved import load_saved_tokenizer, tokenizer_files
from pipeline.tokenization.special_tokens import SpecialIds


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--size", required=True, help="JSON of one model size")
    parser.add_argument("--max-length", type=int, required=True, help="longest sequence, in tokens")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--out", required=True)


def run(args: argparse.Namespace) -> None:
    size = strict.parse_json(SizeSpec, args.size, "size", "--size")
    tokenizer = load_saved_tokenizer(args.tokenizer)
    spec = BackboneSpec.create(size, SpecialIds.from_tokenizer(tokenizer), args.max_length)
    model = build_language_model(spec, "causal", args.seed)
    with atomic_path(args.out) as out:
        save_language_model(model, spec, out)
        tokenizer.save_pretrained(out)
        spec_record = {"size": strict.to_plain(size), "seed": args.seed, "max_length": args.max_length}
        write_provenance(out, spec_record, {"tokenizer": args.tokenizer}, outputs=[out / WEIGHTS_FILE, *tokenizer_files(out)])
