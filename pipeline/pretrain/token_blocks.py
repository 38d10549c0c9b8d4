"""The token stream every objective reads: same tokens, same order, for every run.

The packed corpus is cut into non-overlapping blocks of ``sequence_length`` tokens. The
order of blocks in each epoch is a permutation drawn from ``(seed, epoch)`` alone, so
step ``s`` always sees the same blocks whatever the objective, model size or resume
point: resuming needs only the step number, never a replay of skipped batches.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from pipeline.errors import PipelineError
from pipeline.files import read_json
from pipeline.integrity import verifies_tokens, verify_digest_once


class TokenBlocks:
    def __init__(self, tokens_dir: str | Path, split: str, sequence_length: int, seed: int, verify: bool = True):
        """``verify``: check each array's sha256 (where no earlier job did: :func:`verify_digest_once`);
        a distributed job's first rank does it for all."""
        tokens_dir = Path(tokens_dir)
        meta = read_json(tokens_dir / "meta.json")
        if split not in meta["splits"]:
            raise PipelineError(f"{tokens_dir / 'meta.json'}: no split {split!r}")
        self.fingerprint: str = meta["splits"][split]["fingerprint"]
        self.tokens = SegmentedTokens(tokens_dir, meta["splits"][split]["segments"], np.dtype(meta["dtype"]), verify)
        self.sequence_length = sequence_length
        self.num_blocks = len(self.tokens) // sequence_length
        if self.num_blocks == 0:
            raise PipelineError(f"{tokens_dir / 'meta.json'}: {len(self.tokens)} {split} tokens, fewer than one block of {sequence_length}")
        self.seed = seed

    @lru_cache(maxsize=2)
    def _epoch_order(self, epoch: int) -> np.ndarray:
        return np.random.default_rng([self.seed, epoch]).permutation(self.num_blocks)

    def block(self, index: int) -> np.ndarray:
        start = index * self.sequence_length
        return self.tokens.slice(start, start + self.sequence_length)

    def blocks_for_step(self, step: int, batch_size: int) -> list[np.ndarray]:
        """The ``batch_size`` blocks of optimizer step ``step`` (0-based), wrapping epochs."""
        blocks = []
        for position in range(step * batch_size, (step + 1) * batch_size):
            epoch, offset = divmod(position, self.num_blocks)
            blocks.append(self.block(int(self._epoch_order(epoch)[offset])))
        return blocks

    def first_blocks(self, count: int) -> list[np.ndarray]:
        """The first ``count`` blocks in corpus order (held-out evaluation, no shuffling)."""
        return [self.block(i) for i in range(min(count, self.num_blocks))]


class SegmentedTokens:
    """Several memmapped token arrays (the shards' ``index-tokens`` lists) read as one: a
    block may start in one array and end in the next, as it would in their concatenation."""

    def __init__(self, tokens_dir: Path, segments: list[dict], dtype: np.dtype, verify: bool = True) -> None:
        self.arrays = []
        stamps = tokens_dir.parent / "integrity" / tokens_dir.name  # results/integrity/tokens: outside every rule's output
        for segment in segments:
            path = tokens_dir / segment["file"]
            expected = segment["num_tokens"] * dtype.itemsize
            if not path.is_file() or path.stat().st_size != expected:
                found = f"{path.stat().st_size} bytes" if path.is_file() else "missing"
                raise PipelineError(f"{path}: {found}, meta.json lists {expected} bytes; rerun pack")
            if verify and verifies_tokens():
                verify_digest_once(path, segment["sha256"], f"{tokens_dir / 'meta.json'} lists", path.parent, stamps)
            self.arrays.append(np.memmap(path, dtype=dtype, mode="r"))
        # starts[i]: position of arrays[i]'s first token in the whole stream; starts[-1]: its length
        self.starts = np.cumsum([0, *(len(a) for a in self.arrays)])

    def __len__(self) -> int:
        return int(self.starts[-1])

    def slice(self, start: int, stop: int) -> np.ndarray:
        """Tokens ``start .. stop - 1`` of the stream, copied out of the memmaps."""
        first = int(np.searchsorted(self.starts, start, side="right")) - 1
        pieces = []
        while start < stop:
            array, offset = self.arrays[first], start - int(self.starts[first])
            piece = np.asarray(array[offset : offset + stop - start])
            pieces.append(piece)
            start, first = start + len(piece), first + 1
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
