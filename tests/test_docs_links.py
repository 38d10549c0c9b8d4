"""Every link between the project's pages resolves: the file exists and, for ``page.md#anchor``,
the page has that heading (GitHub's anchor for it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO

PAGES = sorted([REPO / "README.md", REPO / "BENCHMARKS.md", *(REPO / "docs").glob("*.md"), *(REPO / "bench" / "records").glob("*.md")])
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but hyphens and underscores dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {anchor(line.lstrip("#")) for line in page.read_text().splitlines() if line.startswith("#")}


def local_links(page: Path) -> list[str]:
    return [target for target in LINK.findall(page.read_text()) if not re.match(r"[a-z]+:", target)]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_link_between_pages_resolves(page: Path) -> None:
    broken = []
    for target in local_links(page):
        path, _, fragment = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists() or (fragment and linked.suffix == ".md" and fragment not in anchors(linked)):
            broken.append(target)
    assert broken == [], f"{page.relative_to(REPO)}: links that lead nowhere: {broken}"


def test_the_readme_links_every_docs_page_and_stays_short() -> None:
    readme = (REPO / "README.md").read_text()
    linked = {(REPO / target.partition("#")[0]).resolve() for target in local_links(REPO / "README.md")}
    assert {page.resolve() for page in (REPO / "docs").glob("*.md")} <= linked
    assert len(readme.encode()) < 10_000
