"""Tokenizer training and corpus packing (flat memmap token arrays)."""
