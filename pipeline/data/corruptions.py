"""Local corruptions that turn an acceptable English sentence into an unacceptable one.

Each kind edits one or two whitespace-separated words of a real sentence and leaves the
rest untouched, so a model that prefers the original has noticed something local, as in
BLiMP's minimal pairs (Warstadt et al., 2020). Rules only fire where the text allows the
edit to be an error without a parser:

- ``adjacent_swap``: two adjacent lower-case words that differ trade places ("the
  market rose" -> "market the rose"). Most such swaps break the sentence; the kind is
  reported on its own because a few do not.
- ``article``: the indefinite article swaps form ("an year", "a hour").
- ``pronoun_verb_agreement``: a subject pronoun and the verb right after it disagree
  ("he are", "they has").
- ``determiner_number``: a demonstrative disagrees with the noun after it ("these year",
  "this results"), judged by the noun's final ``s``; not where the demonstrative stands
  alone ("this will be" -> "these will be" may be fine).

Each kind returns every place it could edit; the caller picks one with a seeded RNG.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

Words = Sequence[str]
Edit = tuple[int, tuple[str, ...]]  # (first word index, replacement words for that many words)

_LOWER_WORD = re.compile(r"[a-z]+")
_ALPHA_WORD = re.compile(r"[A-Za-z]+")

# Singular subjects and their verbs' plural forms, and the reverse.
_SINGULAR_SUBJECTS = frozenset({"he", "she", "it"})
_PLURAL_SUBJECTS = frozenset({"they", "we"})
# Not "he was" -> "he were": the subjunctive ("if she were to go") makes it acceptable.
_TO_PLURAL_VERB = {"is": "are", "has": "have", "does": "do"}
_TO_SINGULAR_VERB = {"are": "is", "were": "was", "have": "has", "do": "does"}
# Words after "this" that make it a pronoun ("this will be", "this is") or are no noun:
# changing "this" there may stay acceptable ("these will be").
_NOT_NOUNS = frozenset(
    "is was are were will would can could shall should may might must has have had does did do be been being "
    "and or but nor so yet to of in on at by for with from as than that which who whom whose when where while "
    "if because about into over after before not also just only very too more most".split()
)


def _with_case(template: str, word: str) -> str:
    """``word`` capitalised like ``template`` (a sentence-initial "He" stays capitalised)."""
    return word.capitalize() if template[:1].isupper() else word


def adjacent_swap(words: Words) -> list[Edit]:
    return [
        (i, (words[i + 1], words[i]))
        for i in range(len(words) - 1)
        if _LOWER_WORD.fullmatch(words[i]) and _LOWER_WORD.fullmatch(words[i + 1]) and words[i] != words[i + 1]
    ]


def article(words: Words) -> list[Edit]:
    # The source is edited prose, so "a" already stands before a consonant sound and "an"
    # before a vowel sound: swapping them is an error whatever the next word's spelling
    # ("an university", "a hour").
    swapped = {"a": "an", "an": "a"}
    return [
        (i, (_with_case(words[i], swapped[words[i].lower()]),))
        for i in range(len(words) - 1)
        if words[i].lower() in swapped and _ALPHA_WORD.fullmatch(words[i + 1])
    ]


def pronoun_verb_agreement(words: Words) -> list[Edit]:
    edits = []
    for i in range(len(words) - 1):
        subject, verb = words[i].lower(), words[i + 1]
        if subject in _SINGULAR_SUBJECTS and verb in _TO_PLURAL_VERB:
            edits.append((i + 1, (_TO_PLURAL_VERB[verb],)))
        elif subject in _PLURAL_SUBJECTS and verb in _TO_SINGULAR_VERB:
            edits.append((i + 1, (_TO_SINGULAR_VERB[verb],)))
    return edits


def determiner_number(words: Words) -> list[Edit]:
    edits = []
    for i in range(len(words) - 1):
        determiner, noun = words[i], words[i + 1]
        if not _LOWER_WORD.fullmatch(noun) or len(noun) < 3 or noun in _NOT_NOUNS:
            continue
        plural_noun = noun.endswith("s") and not noun.endswith("ss")
        swapped = {"this": "these", "these": "this", "those": "that"}.get(determiner.lower())
        if swapped is None:
            continue
        # "this year" -> "these year"; "these results" -> "this results"; "those days" -> "that days"
        if (determiner.lower() == "this") != plural_noun:
            edits.append((i, (_with_case(determiner, swapped),)))
    return edits


CORRUPTIONS: dict[str, Callable[[Words], list[Edit]]] = {
    "adjacent_swap": adjacent_swap,
    "article": article,
    "pronoun_verb_agreement": pronoun_verb_agreement,
    "determiner_number": determiner_number,
}


def apply_edit(words: Words, edit: Edit) -> list[str]:
    start, replacement = edit
    return [*words[:start], *replacement, *words[start + len(replacement) :]]
