"""MediaWiki markup to prose: what a reader sees stays, markup and link lists go."""

from __future__ import annotations

from pipeline.data.sources.wikitext import to_prose


def test_templates_refs_files_tables_categories_and_link_sections_are_removed():
    wikitext = (
        "{{Infobox vessel\n| name = Teapot\n}}\n"
        "[[File:Pot.jpg|thumb|right|A [[teapot]] on a table]]\n"
        "A '''teapot''' is used for [[Brewing|steeping]] tea.<ref>{{cite book|title=Tea}}</ref> "
        "It is made of ''clay''.<ref name=\"a\" /><!-- note -->\n\n"
        "== History ==\n"
        "First used in [[China]].\n"
        '{| class="wikitable"\n|-\n| 14th || {{flag|China}} clay\n|}\n'
        "== See also ==\n* [[Kettle]]\n"
        "== References ==\n{{reflist}}\n"
        "[[Category:Teaware]]\n[[de:Teekanne]]"
    )
    assert to_prose(wikitext) == "A teapot is used for steeping tea. It is made of clay.\nHistory\nFirst used in China."


def test_an_unbalanced_italic_does_not_hide_later_sections():
    wikitext = "Some ''odd text.\n\n== Notes ==\n* a footnote\n\n== Legacy ==\nIt lasted."
    assert to_prose(wikitext) == "Some odd text.\nLegacy\nIt lasted."


def test_orphaned_punctuation_from_removed_templates_is_tidied():
    assert to_prose("Aristotle ({{IPAc-en|ˈ|æ}}; {{lang-grc|x}}, ''Aristotélēs'') was a philosopher {{sfn|A}}.") == (
        "Aristotle (Aristotélēs) was a philosopher."
    )
