"""MediaWiki markup -> plain prose, for the Wikipedia sample in the pretraining corpus.

``mwparserfromhell`` turns links into their text and drops templates, but keeps what a
reader never sees as prose: reference footnotes, table cells, image captions
(``thumb|...``), category and interlanguage links, and the link lists of the closing
sections. Those go first; what is left is paragraphs and section headings.
"""

from __future__ import annotations

import re

import mwparserfromhell
from mwparserfromhell.nodes import Comment, Heading, Node, Tag, Template, Wikilink
from mwparserfromhell.wikicode import Wikicode

# Closing sections made of citations and link lists, not prose.
_LIST_SECTIONS = frozenset(
    {
        "see also",
        "references",
        "external links",
        "further reading",
        "notes",
        "bibliography",
        "sources",
        "footnotes",
        "citations",
        "notes and references",
        "works cited",
    }
)
_HIDDEN_TAGS = frozenset(
    {
        "ref",
        "references",
        "table",
        "gallery",
        "math",
        "chem",
        "timeline",
        "imagemap",
        "score",
        "syntaxhighlight",
        "source",
        "div",
        "noinclude",
        "includeonly",
    }
)
# [[File:...]], [[Category:...]], [[de:...]]: media, categories and other languages.
_NON_PROSE_LINK = re.compile(r"^\s*:?\s*(file|image|media|category|wikt|wiktionary|[a-z]{2,3}(-[a-z]+)*)\s*:", re.I)
_REFS = re.compile(r"<ref[^>/]*/>|<ref[^>]*>.*?</ref>", re.S | re.I)
_COMMENTS = re.compile(r"<!--.*?-->", re.S)
_STYLE_QUOTES = re.compile(r"'{2,}")  # ''italic'', '''bold'''
# Lines left over from markup the parser did not recognise (broken tables, captions).
_JUNK_LINE = re.compile(r"^(thumb\||\[\[|\{\||\|[-}+]?|!|<)|\|thumb\b|^\W*$", re.I)
# Punctuation orphaned by removed templates: "Aristotle (;  , Greek" and "ASD , a".
_ORPHAN_OPENING = re.compile(r"\(\s*[;,]\s*(?:[;,]\s*)*")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"[ \t]+([,.;:)])")
_EMPTY_PARENTHESES = re.compile(r"\s*\(\s*\)")


def to_prose(wikitext: str) -> str:
    """The readable text of one article's wikitext, paragraphs separated by newlines."""
    wikitext = _without_tables(_REFS.sub("", _COMMENTS.sub("", wikitext)))
    kept: list[Node] = []
    in_list_section = False
    # Bold/italic quotes stay text: parsed as tags, one unbalanced '' swallows the
    # headings after it, and with them the ends of the closing link-list sections.
    for node in mwparserfromhell.parse(wikitext, skip_style_tags=True).nodes:
        if isinstance(node, Heading) and node.level <= 2:
            in_list_section = node.title.strip_code().strip().lower() in _LIST_SECTIONS
        if not in_list_section and _is_prose(node):
            kept.append(node)
    text = _STYLE_QUOTES.sub("", Wikicode(kept).strip_code(normalize=True, collapse=True))
    text = _ORPHAN_OPENING.sub("(", text)
    text = _EMPTY_PARENTHESES.sub("", _SPACE_BEFORE_PUNCTUATION.sub(r"\1", text))
    lines = (line.strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if not _JUNK_LINE.search(line))


def _is_prose(node: Node) -> bool:
    if isinstance(node, Wikilink):
        return not _NON_PROSE_LINK.match(str(node.title))
    if isinstance(node, Tag):
        return str(node.tag).strip().lower() not in _HIDDEN_TAGS
    return not isinstance(node, (Template, Comment))


def _without_tables(wikitext: str) -> str:
    """Drop ``{| ... |}`` tables line by line, nested ones included.

    Done before parsing because tables whose cells hold templates often do not parse
    as table tags and would leak their cell markup into the text.
    """
    kept = []
    depth = 0
    for line in wikitext.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("{|"):
            depth += 1
        if depth == 0:
            kept.append(line)
        elif stripped.startswith("|}"):
            depth -= 1
    return "\n".join(kept)
