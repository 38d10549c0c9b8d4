"""How ``N`` shards cut a sequence of items (rows, data files): contiguous pieces, so that
the pieces read in shard order are the sequence in its own order."""

from __future__ import annotations


def contiguous_range(length: int, num_shards: int, index: int) -> range:
    """Shard ``index`` of ``length`` items cut in ``num_shards`` contiguous pieces, the first
    ``length % num_shards`` one item longer (as ``datasets`` cuts its files)."""
    size, longer = divmod(length, num_shards)
    start = size * index + min(index, longer)
    return range(start, start + size + (1 if index < longer else 0))
