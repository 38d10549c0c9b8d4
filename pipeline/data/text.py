"""Text decoding and normalisation shared by tasks and corpus.

Both stages clean with the same :func:`clean_text` and tokenize with the same
:func:`words`, so a test sentence and its copy inside a pretraining document reduce to
the same tokens: deduplication and decontamination compare like with like.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterator

logger = logging.getLogger(__name__)

# Characters that render as nothing but split words for a tokenizer: BOM, zero-width
# space, soft hyphen.
_INVISIBLE = dict.fromkeys(map(ord, "\ufeff\u200b\u00ad"))
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")
_SPACES = re.compile(r"[^\S\n]+")
_WORD = re.compile(r"\w+")


def decode(data: bytes, where: str) -> str:
    """UTF-8, falling back to Windows-1252: one BBC article is stored that way."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        logger.info("%s: not UTF-8, decoded as Windows-1252", where)
        return data.decode("cp1252", errors="replace")


def clean_text(text: str) -> str:
    """NFC text with single spaces, stripped lines and no blank lines.

    Line breaks survive (as one ``\\n``) because they carry structure: an article's
    title and paragraphs, one review snippet per line.
    """
    text = unicodedata.normalize("NFC", text).translate(_INVISIBLE)
    text = _CONTROL.sub(" ", text.replace("\r\n", "\n").replace("\r", "\n"))
    lines = (_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def dedup_key(text: str) -> str:
    """What two texts must share to count as exact duplicates: case and spacing aside."""
    return " ".join(text.lower().split())


def words(text: str) -> list[str]:
    """Lowercased word tokens without punctuation, the unit of n-gram overlap."""
    return _WORD.findall(text.lower())


def word_ngrams(tokens: list[str], n: int) -> Iterator[str]:
    """Every run of ``n`` consecutive tokens, joined by spaces (hashable, exact)."""
    for start in range(len(tokens) - n + 1):
        yield " ".join(tokens[start : start + n])


def count_words(text: str) -> int:
    """Whitespace-separated words, the unit the corpus statistics report."""
    return len(text.split())
