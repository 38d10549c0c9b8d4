"""One registry for every plug-in family: objectives, losses, task types, metrics and claim-check
kinds (and, by name, the result tables' schema and builds: pipeline/analysis/table_schema.py).

A family is a package with one module per member. Its ``__init__`` calls :func:`load_members`,
which imports every module of the package, and each module adds its entries to the family's
:class:`Registry` by name (``register("clm", ...)``), so a new member is one new file and no list
is kept by hand. A name registered twice is refused naming both places; an unknown name is
refused listing the known ones.

:mod:`pipeline.code_graph` reads the same two things from the source: a package whose
``__init__`` calls ``load_members(__name__, __path__)`` runs every module in it, and a module
registers the names given as the literal first argument of its ``register...`` calls. So a job
that uses one member hashes that member's code, not its siblings'. That holds because a member
module only defines and registers at its top level (``tests/test_architecture.py`` checks it).
"""

from __future__ import annotations

import contextlib
import importlib
import pkgutil
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import TypeVar

from pipeline.errors import PipelineError

T = TypeVar("T")


class Registry(Mapping[str, T]):
    """Name -> entry of one family (``what`` names it in messages: "objective", "metric", ...)."""

    def __init__(self, what: str):
        self.what = what
        self._entries: dict[str, T] = {}
        self._sites: dict[str, str] = {}

    def add(self, name: str, entry: T, site: str | None = None) -> T:
        """Register ``entry`` as ``name``; ``site`` says where (default: the module that called the
        family's ``register``, two frames up)."""
        site = site or registering_module()
        if name in self._entries:
            raise ValueError(f"{self.what} {name!r} registered twice: in {self._sites[name]} and in {site}")
        self._entries[name] = entry
        self._sites[name] = site
        return entry

    @contextlib.contextmanager
    def extra(self, name: str, entry: T) -> Iterator[T]:
        """``entry`` registered as ``name`` for the block only: a test's own member."""
        self.add(name, entry, "a test")
        try:
            yield entry
        finally:
            del self._entries[name], self._sites[name]

    def site(self, name: str) -> str:
        """The module that registered ``name``."""
        return self._sites[self.known(name)]

    def known(self, name: str) -> str:
        """``name`` if registered, else a one-line error listing the registered names."""
        if name not in self._entries:
            raise PipelineError(f"unknown {self.what} {name!r} (registered: {', '.join(sorted(self._entries))})")
        return name

    def __getitem__(self, name: str) -> T:
        return self._entries[self.known(name)]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def get(self, name: str, default: T | None = None) -> T | None:
        return self._entries.get(name, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


def registering_module() -> str:
    """The module three frames up: Registry.add <- the family's register <- the member module."""
    return sys._getframe(3).f_globals.get("__name__", "?")


def load_members(package: str, path: Iterable[str]) -> None:
    """Import every module of ``package`` (at ``path``, its ``__path__``) but ``base``, each registering its entries."""
    for module in pkgutil.iter_modules(path):
        if module.name != "base":
            importlib.import_module(f"{package}.{module.name}")
