"""docs/extending.md's routes hold against the code: for a table, a claim, a kernel, a rule and a
kind of result, every file the route names exists (a ``<placeholder>`` file's folder does), every
test it names exists, and every constant or class it names (``RESULT_KINDS``, ``TableSchema``)
is defined in a module the route names. A route that survives a rename here would send a newcomer
to code that is gone; tests/test_rule_places.py checks the rule route's places in full."""

from __future__ import annotations

import importlib
import re

import pytest

from tests.conftest import REPO

ROUTES = ("A table of the report", "A claim", "A compute kernel", "A rule", "A kind of result")
FILE = re.compile(r"`((?:pipeline|rules|config|tests)/[\w/<>.-]+\.(?:py|smk|yaml))`")
# Backticked names of constants (UPPER_CASE) and classes (CamelCase): what a route tells you to extend.
NAME = re.compile(r"`([A-Z][A-Z0-9_]+|[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+)`")


def route(title: str) -> str:
    text = (REPO / "docs" / "extending.md").read_text()
    return text[text.index(f"## {title}\n") :].split("\n## ", 1)[0]


def module_of(path: str) -> str | None:
    """The importable module a named file is (a package's ``__init__`` for a folder's placeholder); None for other files."""
    if not path.startswith("pipeline/") or not path.endswith(".py"):
        return None
    if "<" in path:  # a new member of a package: the package registers it
        return path.rsplit("/", 1)[0].replace("/", ".")
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


@pytest.mark.parametrize("title", ROUTES)
def test_every_file_a_route_names_exists(title: str) -> None:
    named = FILE.findall(route(title))
    assert named, f"{title}: names no file"
    missing = [path for path in named if not (REPO / (path.rsplit("/", 1)[0] if "<" in path else path)).exists()]
    assert missing == [], f"{title}: names files that are not there: {missing}"
    assert any(path.startswith("tests/") for path in named), f"{title}: names no test that checks it"


@pytest.mark.parametrize("title", ROUTES)
def test_every_constant_and_class_a_route_names_is_defined_where_it_says(title: str) -> None:
    text = route(title)
    modules = [importlib.import_module(m) for m in dict.fromkeys(filter(None, map(module_of, FILE.findall(text))))]
    undefined = [name for name in NAME.findall(text) if not any(hasattr(module, name) for module in modules)]
    assert undefined == [], f"{title}: names {undefined}, defined in none of {[m.__name__ for m in modules]}"
