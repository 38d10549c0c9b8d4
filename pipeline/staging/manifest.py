"""The hub mirror's ``manifest.json``: every staged repository's files with their size and
sha256, as ``python -m pipeline stage`` downloaded and checked them; and the check a job makes
before it reads a staged repository, that its files are still those bytes.

Layout: ``{"repositories": {"<kind>s/<repo>[@<revision>]": {"files": {"<path>": {"size": N,
"sha256": "<hex>"}}, "commit": "<the hub's commit staged>"}}}`` (no commit for a repository staged
from a directory). Anything else (a list, a junk key, a size that is not a count) is
refused in one line naming the file and the key, never kept or half read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pipeline.errors import PipelineError
from pipeline.files import read_json, sha256_file

MANIFEST = "manifest.json"
FILE_KEYS = {"size", "sha256"}


def repository_key(kind: str, repo: str, revision: str | None) -> str:
    """A repository's place in a mirror (and in a directory laid out as one), relative to its root: its manifest key."""
    return f"{kind}s/{repo}" + (f"@{revision}" if revision else "")


def mirror_dir(mirror: str | Path, kind: str, repo: str, revision: str | None) -> Path:
    """Where a repository lies in the mirror."""
    return Path(mirror) / repository_key(kind, repo, revision)


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest at ``path``, checked key by key."""
    data = read_json(path)
    if not isinstance(data, dict) or set(data) != {"repositories"} or not isinstance(data["repositories"], dict):
        raise PipelineError(f"{path}: not a mirror manifest (a mapping whose one key is 'repositories'); stage the mirror again")
    for key, repository in data["repositories"].items():
        keys_valid = isinstance(repository, dict) and "files" in repository and set(repository) <= {"files", "commit"}
        if not keys_valid or not isinstance(repository["files"], dict) or not isinstance(repository.get("commit", ""), str):
            raise PipelineError(f"{path}: repositories.{key}: not a mapping of 'files' (and the 'commit' staged)")
        for name, entry in repository["files"].items():
            valid = isinstance(entry, dict) and set(entry) == FILE_KEYS and isinstance(entry["size"], int)
            if not valid or not isinstance(entry["sha256"], str) or len(entry["sha256"]) != 64:
                raise PipelineError(f"{path}: repositories.{key}.files.{name}: not {{size: <bytes>, sha256: <64 hex digits>}}")
    return data


def verify_staged(directory: str | Path) -> None:
    """Refuse a staged repository whose files are not the ones staging recorded: a file changed,
    missing, added (a planted ``modeling_*.py``) or a link."""
    if not verify_if_staged(directory):
        raise PipelineError(f"{directory}: no {MANIFEST} above it lists it, so nothing vouches for its files; stage it again")


def verify_if_staged(directory: str | Path) -> bool:
    """:func:`verify_staged` for a directory of a mirror (the nearest folder above it holding a
    manifest that lists it); False, and nothing checked, for one no manifest lists (a local
    directory of the user's own)."""
    directory = Path(directory)
    for mirror in directory.parents:
        if (mirror / MANIFEST).is_file():
            key = directory.relative_to(mirror).as_posix()
            repositories = read_manifest(mirror / MANIFEST)["repositories"]
            if key in repositories:
                _compare(directory, repositories[key]["files"], mirror / MANIFEST)
                return True
    return False


def _compare(directory: Path, recorded: dict[str, dict[str, Any]], manifest: Path) -> None:
    present = files_under(directory, f"{directory} (staged)")
    for name in sorted(set(present) | set(recorded)):
        if name not in recorded:
            raise PipelineError(f"{directory / name}: not staged ({manifest} does not list it); remove it, or stage the mirror again")
        if name not in present:
            raise PipelineError(f"{directory / name}: listed in {manifest} but missing; stage the mirror again")
        _check_file(directory / name, recorded[name]["sha256"], manifest)


def verify_mirrored_files(mirror: Path, repository: Path, files: list[Path]) -> None:
    """Refuse any of ``files`` (under ``repository``, a folder of ``mirror``) whose bytes are not
    those staging recorded in the mirror's manifest, or that it never staged: what a job checks
    of the files it is about to read (a data shard, a split), not the whole repository."""
    manifest = mirror / MANIFEST
    key = repository.relative_to(mirror).as_posix()
    recorded = read_manifest(manifest)["repositories"].get(key, {"files": {}})["files"]
    for path in files:
        name = path.relative_to(repository).as_posix()
        if name not in recorded:
            raise PipelineError(f"{path}: not staged ({manifest} does not list it under {key}); stage the mirror again")
        if path.is_symlink():
            raise PipelineError(f"{path}: a symbolic link in the mirror; a repository holds files only")
        _check_file(path, recorded[name]["sha256"], manifest)


def _check_file(path: Path, expected: str, manifest: Path) -> None:
    actual = sha256_file(path)
    if actual != expected:
        raise PipelineError(
            f"{path}: sha256 {actual} is not the {expected} {manifest} recorded when it was staged;"
            " it changed since: stage the mirror again"
        )


def files_under(root: Path, what: str) -> dict[str, Path]:
    """Every file below ``root`` by its path relative to it; a symbolic link (which could point
    anywhere on the machine) is refused, never followed."""
    found = {}
    for folder, directories, files in os.walk(root, followlinks=False):
        for name in [*directories, *files]:
            path = Path(folder) / name
            if path.is_symlink():
                raise PipelineError(f"{path}: a symbolic link in {what}; a repository holds files only")
        found.update({(Path(folder) / name).relative_to(root).as_posix(): Path(folder) / name for name in files})
    return found
