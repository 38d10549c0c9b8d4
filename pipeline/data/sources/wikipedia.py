"""gensim's wheel: a shortened English Wikipedia dump (pretraining text), its markup
stripped by :mod:`.wikitext` (which needs mwparserfromhell, imported only here)."""

from __future__ import annotations

import bz2
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from pathlib import Path

from pipeline.data.sources import wikitext
from pipeline.data.sources.locate import Row, archive_errors, nonempty
from pipeline.errors import PipelineError


def read_dump(root: Path) -> Iterator[Row]:
    """Main-namespace articles of MediaWiki XML dumps, title line then prose; no redirects."""
    dumps = sorted(root.glob("gensim/test/test_data/enwiki-latest-pages-articles1.xml-*-shortened.bz2"))
    if not dumps:
        raise PipelineError(f"{root}: no enwiki-latest-pages-articles1.xml-*-shortened.bz2 dump in the artifact")
    for dump in dumps:
        yield from nonempty(_wikipedia_articles(dump, root), str(dump))


def _wikipedia_articles(dump: Path, root: Path) -> Iterator[Row]:
    with archive_errors(dump, root), bz2.open(dump) as handle:
        try:
            for _, element in ElementTree.iterparse(handle):
                if _local_name(element.tag) == "page":
                    article = _article(element, dump)
                    if article is not None:
                        yield article
                    element.clear()
        except ElementTree.ParseError as error:
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
