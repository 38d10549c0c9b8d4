"""The package's import graph, read from its source (never imported), and each stage's code
hash: the hash of every module its entry module can import, each as its syntax tree without
docstrings, so that comments, layout and docstrings rerun nothing.

A rule takes its stage's hash as a param (``pipeline/workflow/rule_params.py``), so a change in any module a
stage runs, and only in those, reruns that stage's jobs: the rerun contract follows the
imports instead of a hand-kept map that drifts (the bag of words once built its features
through ``finetune/framing.py`` while its hash left that file out). tests/test_architecture.py
checks its house rules on the same graph.

The graph sees every ``import`` and ``from ... import`` anywhere in a file (top level, inside
functions, under TYPE_CHECKING), and the registries that import every module of their package
at run time (``load_members(__name__, __path__)``, :mod:`pipeline.registry`; the data readers'
index imports one by name, ``importlib.import_module(f"{__name__}.{name}")``). Importing a module
runs its packages' ``__init__`` first, so a closure holds those too, and the data files the
package's code reads beside it (``report/templates/``).
"""

from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

from pipeline.provenance import PACKAGE_ROOT


def module_name(path: Path, root: Path = PACKAGE_ROOT) -> str:
    parts = (root.name, *path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules(root: Path = PACKAGE_ROOT) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__.py``)."""
    return {module_name(path, root): path for path in sorted(root.rglob("*.py")) if "__pycache__" not in path.parts}


def imported(module: str, path: Path, modules: dict[str, Path], registries: bool = True) -> set[str]:
    """The package's modules ``module`` imports: each name resolved to the longest module it
    names; with ``registries``, a registry importing its package's modules by name depends on
    all of them (what runs; the static layering rules leave those edges out)."""
    status = path.stat()
    names, loads_members = import_names(module, path, status.st_mtime_ns, status.st_size)
    if registries and loads_members:
        names += tuple(name for name in modules if name.startswith(module + ".") and "." not in name[len(module) + 1 :])
    targets = set()
    for name in names:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        # A module inside a package importing a sibling runs the package's __init__ first;
        # that is how packages work, not a dependency on their own facade.
        if name and name != module and not module.startswith(name + "."):
            targets.add(name)
    return targets


@functools.lru_cache(maxsize=1024)
def import_names(module: str, path: Path, mtime_ns: int, size: int) -> tuple[tuple[str, ...], bool]:
    """(every dotted name ``module`` imports, relative ones made absolute; whether it is a package
    loading its own modules by name), parsed once per file version."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    names: list[str] = []
    loads_members = False
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            names += [f"{base}.{alias.name}" for alias in node.names]
        elif is_package and imports_own_modules_by_name(node):
            loads_members = True
    return tuple(names), loads_members


def imports_own_modules_by_name(node: ast.AST) -> bool:
    """A registry loading its package's modules: all of them (``load_members(__name__, __path__)``,
    pipeline/registry.py), or the one a name asks for (``importlib.import_module(f"{__name__}.{...}")``,
    the data readers' lazy index)."""
    if not (isinstance(node, ast.Call) and node.args):
        return False
    first = node.args[0]
    if isinstance(node.func, ast.Name) and node.func.id == "load_members":
        return isinstance(first, ast.Name) and first.id == "__name__"
    return (
        isinstance(node.func, ast.Attribute)
        and node.func.attr == "import_module"
        and isinstance(first, ast.JoinedStr)
        and isinstance(first.values[0], ast.FormattedValue)
        and isinstance(first.values[0].value, ast.Name)
        and first.values[0].value.id == "__name__"
    )


@functools.cache
def import_graph(root: Path = PACKAGE_ROOT, registries: bool = True) -> dict[str, frozenset[str]]:
    """module -> the package's modules it imports (with the registries' run-time imports, or without)."""
    modules = package_modules(root)
    return {module: frozenset(imported(module, path, modules, registries)) for module, path in modules.items()}


def reachable(graph: dict[str, frozenset[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others (``start`` itself only through a cycle)."""
    seen, stack = set(), [start]
    while stack:
        for target in graph[stack.pop()]:
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


def closure(graph: dict[str, frozenset[str]], entry: str) -> set[str]:
    """What running ``entry`` executes: it, what it imports, and every package ``__init__`` above each."""
    run, pending = set(), [entry]
    while pending:
        module = pending.pop()
        if module in run:
            continue
        run.add(module)
        parents = [".".join(module.split(".")[:depth]) for depth in range(1, module.count(".") + 1)]
        pending += [parent for parent in parents if parent in graph] + sorted(graph[module])
    return run


# A job's registry members: (registry package, the names it uses there), sorted. A registry not
# named is taken whole, as are the ones whose names some member does not register literally.
Uses = tuple[tuple[str, frozenset[str]], ...]


def registered_names(path: Path) -> frozenset[str]:
    """The names a module registers: the literal first argument of each ``register...(...)`` call
    in it, or of the call it wraps (``register(Metric("accuracy", ...))``, or its ``name=``)."""
    status = path.stat()
    return _registered_names(path, status.st_mtime_ns, status.st_size)


@functools.lru_cache(maxsize=1024)
def _registered_names(path: Path, mtime_ns: int, size: int) -> frozenset[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("register") and node.args:
            first = node.args[0]
            if isinstance(first, ast.Call):  # register(Metric("accuracy", ...)) or register(ResultTable(name="scores", ...))
                named = [keyword.value for keyword in first.keywords if keyword.arg == "name"]
                first = first.args[0] if first.args else (named[0] if named else first)
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names.add(first.value)
    return frozenset(names)


def job_graph(uses: Uses, root: Path = PACKAGE_ROOT) -> dict[str, frozenset[str]]:
    """The import graph as one job runs it: each registry of ``uses`` loads every member (that is
    how registries work), but only the members registering a name the job uses can reach its
    result, since a member module only defines and registers (tests/test_architecture.py)."""
    graph, static, modules = import_graph(root), import_graph(root, registries=False), package_modules(root)
    restricted = dict(graph)
    for package, names in uses:
        members = graph[package] - static[package]  # the modules only load_members imports
        registering = {member: registered_names(modules[member]) for member in members}
        if not names <= set().union(*registering.values()):
            continue  # a name no member registers literally: the whole registry, to be safe
        restricted[package] = static[package] | {member for member, found in registering.items() if found & names}
    return restricted


def closure_files(entry: str, root: Path = PACKAGE_ROOT, uses: Uses = ()) -> list[Path]:
    """The source files of ``entry``'s closure (for a job using ``uses`` of the registries), and the
    data folders of its packages (folders without an ``__init__.py``, such as ``report/templates/``), sorted."""
    modules = package_modules(root)
    files = {modules[module] for module in closure(job_graph(uses, root) if uses else import_graph(root), entry)}
    for init in [path for path in files if path.name == "__init__.py"]:
        for folder in (child for child in init.parent.iterdir() if child.is_dir() and not (child / "__init__.py").exists()):
            files |= {path for path in folder.rglob("*") if path.is_file() and "__pycache__" not in path.parts}
    return sorted(files)


def stage_code(entry: str, root: Path = PACKAGE_ROOT, uses: Uses = ()) -> str:
    """sha256 (first 16 hex) of the code ``entry`` (a stage's module) runs for a job using ``uses``
    of the registries, its ``code`` param: each module's syntax tree without its docstrings
    (:func:`code_of`), each data file's bytes."""
    digest = hashlib.sha256()
    for path in closure_files(entry, root, uses):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(code_of(path))
    return digest.hexdigest()[:16]


def code_of(path: Path) -> bytes:
    """What of ``path`` can change a result: a module's syntax tree with its docstrings dropped
    (comments and layout never reach the tree), so prose edits rerun nothing while any changed
    name, constant or statement does; a data file (a template) as its bytes. Parsed once per
    file version (path, modification time and size key the cache)."""
    status = path.stat()
    return _code_of(path, status.st_mtime_ns, status.st_size)


@functools.lru_cache(maxsize=1024)
def _code_of(path: Path, mtime_ns: int, size: int) -> bytes:
    if path.suffix != ".py":
        return path.read_bytes()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                node.body = node.body[1:]
    return ast.dump(tree, include_attributes=False).encode()
