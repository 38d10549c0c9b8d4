"""A small rule-based sentence splitter for edited news prose.

BBC News paragraphs are one line each and well punctuated, so rules do: a sentence ends
at ``.``, ``!`` or ``?`` (runs such as ``...`` or ``?!`` included), plus any closing
quotes or brackets, when whitespace and then an upper-case letter, a digit or an
opening quote or bracket follow. It does not end after a title or company abbreviation
(``Mr.``, ``Inc.``) or a single capital initial (``J. K. Rowling``). Nothing here is
learned or random, so the same text always splits the same way. Lower-case continuations
(``etc. and``, ``?" he said``) never split.
"""

from __future__ import annotations

import re

# Abbreviations that end in a full stop yet rarely end a sentence (BBC style drops the
# stop in most of them, "Mr Blair", but quoted and agency text keeps it).
ABBREVIATIONS = frozenset("Mr Mrs Ms Dr Prof St Jr Sr Gen Col Lt Capt Sgt Rev Gov Sen Rep Inc Corp Co Ltd No Mt vs".split())
_END = re.compile(r"""[.!?]+["'\u201d\u2019)\]]*(?=\s+["'\u201c\u2018(\[]?[A-Z0-9])""")
_LAST_WORD = re.compile(r"(\w+)\.$")


def split_sentences(paragraph: str) -> list[str]:
    """The sentences of one paragraph (a line), stripped, in order; none for a blank line."""
    sentences = []
    start = 0
    for end in _END.finditer(paragraph):
        if _is_abbreviation(paragraph[start : end.start() + 1]):
            continue
        sentences.append(paragraph[start : end.end()].strip())
        start = end.end()
    sentences.append(paragraph[start:].strip())
    return [sentence for sentence in sentences if sentence]


def _is_abbreviation(text: str) -> bool:
    """Whether ``text`` (up to and including its final ``.``) ends in an abbreviation or an initial."""
    match = _LAST_WORD.search(text)
    if match is None:
        return False
    word = match.group(1)
    return word in ABBREVIATIONS or (len(word) == 1 and word.isupper())
