"""Finding pretraining documents that contain a task's evaluation text.

A document is contaminated by a task when it shares one word n-gram (``n`` =
``decontamination_ngram``) with one of the task's validation or test texts. A text of
fewer than ``n`` words has no n-gram; it contaminates a document only when it makes up a
whole line of it (a review snippet listed in a movie's page). Matching such short texts
anywhere would be wrong: the one-word review "Horrible." would remove every document
that uses the word.
"""

from __future__ import annotations

from collections.abc import Iterable

from pipeline.data.text import word_ngrams, words


class ContaminationIndex:
    """The evaluation n-grams of several tasks, each remembered with its tasks."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.tasks: list[str] = []
        # text -> bit mask of the tasks it comes from (bit i = self.tasks[i])
        self._ngrams: dict[str, int] = {}
        self._short_texts: dict[str, int] = {}

    def add_task(self, name: str, texts: Iterable[str]) -> None:
        bit = 1 << len(self.tasks)
        self.tasks.append(name)
        for text in texts:
            tokens = words(text)
            if len(tokens) >= self.n:
                for ngram in word_ngrams(tokens, self.n):
                    self._ngrams[ngram] = self._ngrams.get(ngram, 0) | bit
            elif tokens:
                key = " ".join(tokens)
                self._short_texts[key] = self._short_texts.get(key, 0) | bit

    @property
    def num_ngrams(self) -> int:
        return len(self._ngrams)

    def tasks_in(self, document: str) -> list[str]:
        """The tasks (in the order added) whose evaluation text the document contains."""
        found = 0
        tokens: list[str] = []
        for line in document.split("\n"):
            line_tokens = words(line)
            found |= self._short_texts.get(" ".join(line_tokens), 0)
            tokens += line_tokens
        everything = (1 << len(self.tasks)) - 1
        for ngram in word_ngrams(tokens, self.n):
            found |= self._ngrams.get(ngram, 0)
            if found == everything:
                break
        return [name for i, name in enumerate(self.tasks) if found >> i & 1]
