"""Needle-in-a-haystack rows: a number hidden in real news text, to be recalled.

A haystack is consecutive sentences of one split's articles (from a random article's
start, on through the next articles), so its text shares no article with another split.
The needle "The special magic number is NNNN." sits between two sentences, exactly
``round(depth * length)`` words in: the text before it is trimmed at its start and the
text after it at its end, so the haystack has ``length`` words whatever the depth and
the needle never splits a sentence. The number is a seeded random 1000-9999 that does
not occur in the haystack, so the answer is never a copy of other text.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterator

NEEDLE = "The special magic number is {number}."
QUESTION = "What is the special magic number?"
NUMBERS = (1000, 9999)


def needle_rows(articles: list[list[str]], cells: list[tuple[int, float]], rng: random.Random) -> Iterator[dict]:
    """One row ``{context, question, answer, length, depth}`` per (length, depth) cell, in
    order, from ``articles`` (each a list of sentences; together not empty)."""
    sentences = [sentence for article in articles for sentence in article]
    starts = list(itertools.accumulate((len(article) for article in articles[:-1]), initial=0))
    for length, depth in cells:
        stream = itertools.islice(itertools.cycle(sentences), rng.choice(starts), None)
        before_count = round(depth * length)
        before = _words_until(stream, before_count)
        after = _words_until(stream, length - before_count)[: length - before_count]
        before = before[len(before) - before_count :]
        present = set(re.findall(r"\d+", " ".join(before + after)))
        number = str(rng.randint(*NUMBERS))
        while number in present:
            number = str(rng.randint(*NUMBERS))
        context = " ".join([*before, NEEDLE.format(number=number), *after])
        yield {"context": context, "question": QUESTION, "answer": number, "length": length, "depth": depth}


def _words_until(stream: Iterator[str], count: int) -> list[str]:
    """Whole sentences from ``stream`` until they hold at least ``count`` words."""
    words: list[str] = []
    while len(words) < count:
        words += next(stream).split()
    return words
