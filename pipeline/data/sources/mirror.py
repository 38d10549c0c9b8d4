"""A hub source read from the mirror ``python -m pipeline stage`` filled (``hub_mirror``): where a
repository lies in it, which staged files a source reads, and each file verified against the
mirror's manifest before a job reads it. The readers beside this module call it at load time;
:mod:`pipeline.staging.mirror` rewrites a config to read from the mirror at plan time.

The layout is the hub's: ``DIR/datasets/<org>/<name>`` and ``DIR/models/<org>/<name>``
(``@<revision>`` appended to the name where a config pins one).
"""

from __future__ import annotations

from pathlib import Path

from pipeline.config import HubSpec
from pipeline.errors import PipelineError
from pipeline.staging.card import CARD, card_configs, config_data_files
from pipeline.staging.manifest import mirror_dir, verify_mirrored_files, verify_staged
from pipeline.staging.references import HF_URL, is_hub_id


def local_source(spec: HubSpec) -> tuple[str, dict[str, list[str]]]:
    """(path, data files by hub split) to load ``spec`` from: its own; or, under its mirror, the
    staged files it reads. Explicit data files (``hf://``) are their staged copies, globs
    expanded; a repository read by config name reads the files its card gives that config, as
    Parquet (the same record-batch reader as local Parquet, memory flat whatever the files'
    size) or JSON Lines. A reader verifies the files it opens first (:func:`verify_read`); a
    repository whose card says nothing is read whole by ``datasets``, after every staged file
    of it is verified here."""
    if spec.mirror is None:
        return spec.path, spec.file_lists()
    mirror = Path(spec.mirror)
    if spec.file_lists():
        files: dict[str, list[str]] = {}
        for split, listed in spec.file_lists().items():
            files[split] = []
            for file in listed:
                matched = HF_URL.match(file)
                if matched is None:
                    files[split].append(file)
                    continue
                repository = mirror_dir(mirror, "dataset", matched["repo"], matched["revision"])
                files[split] += [str(path) for path in staged_files(repository, [matched["pattern"]], file)]
        return spec.path, files
    if not is_hub_id(spec.path):
        return spec.path, {}
    repository = mirror_dir(mirror, "dataset", spec.path, None)
    card = repository / CARD
    by_split = config_data_files(card_configs(card.read_text(encoding="utf-8"), spec.path), spec.name, spec.path) if card.is_file() else {}
    files = {
        theirs: [str(path) for path in staged_files(repository, split_patterns(by_split, theirs, repository), theirs)]
        for theirs in spec.splits.values()
        if by_split
    }
    builder = reader_of([file for listed in files.values() for file in listed])
    if builder is None:  # no card config, or files datasets must read itself: the whole repository verified
        verify_staged(repository)
        return str(repository), {}
    verify_mirrored_files(mirror, repository, [card])
    return builder, files


def split_patterns(by_split: dict[str | None, list[str]], split: str, repository: Path) -> list[str]:
    """The card's file patterns of ``split``; files the card lists without a split are ``train``'s
    (as ``datasets`` reads them). A split the card gives no files is one line naming it."""
    patterns = by_split.get(split, by_split.get(None, []) if split == "train" else [])
    if not patterns:
        raise PipelineError(f"{repository}: its card gives the config no files for split {split!r} (splits: {sorted(map(str, by_split))})")
    return patterns


def staged_files(repository: Path, patterns: list[str], what: str) -> list[Path]:
    """The staged files of ``repository`` matching ``patterns`` (globs, relative to it), sorted;
    a pattern matching none is one line naming it."""
    found: list[Path] = []
    for pattern in patterns:
        matched = sorted(path for path in repository.glob(pattern) if path.is_file())
        if not matched:
            raise PipelineError(f"{repository}: no staged file matches {pattern!r} ({what}); stage the mirror again")
        found += matched
    return found


def verify_read(spec: HubSpec, files: list[str]) -> None:
    """Before a job reads ``files`` of ``spec`` (those of its shard): each one under the mirror
    checked against the manifest (a changed, unstaged or linked file refused in one line)."""
    if spec.mirror is None:
        return
    mirror = Path(spec.mirror).resolve()
    by_repository: dict[Path, list[Path]] = {}
    for file in map(Path, files):
        if mirror in file.resolve().parents:
            parts = file.resolve().relative_to(mirror).parts  # datasets, <org>, <name>[@<revision>], ...
            by_repository.setdefault(mirror.joinpath(*parts[:3]), []).append(mirror.joinpath(*parts))
    for repository, paths in by_repository.items():
        verify_mirrored_files(mirror, repository, paths)


READERS = {".parquet": "parquet", ".jsonl": "json", ".json": "json", ".jsonl.gz": "json", ".json.gz": "json"}


def reader_of(files: list[str]) -> str | None:
    """The ``datasets`` builder every one of ``files`` is read with (by extension), None if they need several or none."""
    builders = {next((b for ext, b in READERS.items() if file.endswith(ext)), None) for file in files}
    return builders.pop() if len(builders) == 1 else None
