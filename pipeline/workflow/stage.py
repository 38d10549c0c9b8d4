"""``python -m pipeline stage``: what a configuration's workflow reads from the Hugging Face hub,
listed with its size, then downloaded into a mirror directory and verified.

    python -m pipeline stage --configfile config/paper.yaml --to /scratch/hub-mirror --list   # what, and how big
    python -m pipeline stage --configfile config/paper.yaml --to /scratch/hub-mirror          # download and verify

Run on a machine with hub access (a cluster's login node); then add ``hub_mirror:
/scratch/hub-mirror`` to the config (:mod:`pipeline.staging.mirror`) and every job reads the mirror, offline.
A dataset read by config name stages the files its card's ``configs`` give that config
(FineWeb-Edu's ``sample-100BT`` is ``sample/100BT/*``, not the whole repository), plus its card;
``hf://`` data files stage those files; a ready-made tokenizer stages its tokenizer files; an
outside model, its whole repository. What is staged is compared with the repository's record
(pipeline/external/published/hub_records.yaml: features, and row counts from the hub itself),
each difference said in one line. Every file is checked against the sha256 the source
vouches for (the hub's, for its large files) and recorded in ``manifest.json`` with its size
and sha256; a file already staged with the same sha256 is not fetched again.
"""

from __future__ import annotations

import argparse
import fnmatch
import logging
from pathlib import Path
from typing import Any

from pipeline.config import Config
from pipeline.config.data import leaves_its_folder
from pipeline.errors import PipelineError
from pipeline.external.hub_records import RECORDS
from pipeline.files import atomic_path, sha256_file, write_json
from pipeline.staging.card import CARD, card_configs, config_data_files
from pipeline.staging.client import DirectoryHub, HubClient, HuggingFaceHub, RemoteFile
from pipeline.staging.manifest import MANIFEST, mirror_dir, read_manifest, repository_key
from pipeline.staging.record_check import record_parts, staged_differences
from pipeline.staging.references import HubReference, references
from pipeline.workflow.configure import read_configs, resolve_files

logger = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--configfile", nargs="+", default=[], help="config overlays, as snakemake takes them")
    parser.add_argument("--to", required=True, type=Path, help="the mirror directory (created if absent)")
    parser.add_argument("--list", action="store_true", help="list what would be staged, with sizes; download nothing")
    parser.add_argument(
        "--from-directory", type=Path, help="stage from a directory laid out as the hub (another mirror) instead of the hub"
    )


def config_read_from_the_hub(configfiles: list[str]) -> Config:
    """The config the overlays make, with its ``hub_mirror`` dropped: what is staged (or
    faked, in the tests' paper hub) is read from the hub itself, not from a mirror of it."""
    data = read_configs(configfiles)
    data.pop("hub_mirror", None)
    return resolve_files(data, configfiles).config


def run(args: argparse.Namespace) -> None:
    config = config_read_from_the_hub(args.configfile)
    client: HubClient = DirectoryHub(args.from_directory) if args.from_directory else HuggingFaceHub()
    found = references(config)
    print(f"{len(found)} repositories read from the hub:")
    for reference in found:
        print(f"  {reference.label}  ({', '.join(reference.where)})")
    plan = [(reference, selected_files(client, reference)) for reference in found]
    total = 0
    for reference, files in plan:
        size = sum(f.size for f in files)
        total += size
        print(f"{reference.label}: {len(files)} files, {gigabytes(size)}  ({', '.join(reference.where)})")
    print(f"total: {len(plan)} repositories, {sum(len(files) for _, files in plan)} files, {gigabytes(total)}")
    if args.list:
        return
    manifest_path = args.to / MANIFEST
    manifest: dict[str, Any] = read_manifest(manifest_path) if manifest_path.is_file() else {"repositories": {}}
    for reference, files in plan:
        staged = manifest["repositories"].setdefault(repository_key(reference.kind, reference.repo, reference.revision), {"files": {}})
        commit, before = client.commit(reference), staged.get("commit")
        if commit is not None:
            if before is not None and before != commit:
                logger.warning(
                    "%s: staged at commit %s before, the hub is at %s now: its changed files are replaced", reference.label, before, commit
                )
            staged["commit"] = commit
        for remote in files:
            staged["files"][remote.path] = stage_file(client, reference, remote, args.to)
        logger.info("%s: %d files staged", reference.label, len(files))
        for part in record_parts(reference):
            repository = mirror_dir(args.to, reference.kind, reference.repo, reference.revision)
            found = staged_differences(repository, part, count_rows=client.serves_the_hub)
            if found:
                logger.warning("%s differs from its record (%s): %s", reference.label, RECORDS.name, "; ".join(found))
    args.to.mkdir(parents=True, exist_ok=True)
    write_json(manifest_path, manifest)


def gigabytes(size: int) -> str:
    return f"{size / 1e9:,.2f} GB"


def selected_files(client: HubClient, reference: HubReference) -> list[RemoteFile]:
    """The repository's files the config reads: its patterns', its config's (by the card), or all."""
    files = client.list_files(reference)
    patterns = list(reference.patterns)
    if reference.config_name is not None:
        patterns += config_patterns(client, reference, files)
    if not patterns:
        return files
    chosen = [f for f in files if f.path == CARD or any(fnmatch.fnmatch(f.path, pattern) for pattern in patterns)]
    if not any(f.path != CARD for f in chosen):
        # a Parquet conversion names its directories by builder config: say which exist
        directories = sorted({f.path.split("/")[0] for f in files if "/" in f.path})
        raise PipelineError(
            f"{reference.label}: no file matches {', '.join(patterns)} ({', '.join(reference.where)}); "
            f"its directories: {', '.join(directories) or 'none'}"
        )
    return chosen


def config_patterns(client: HubClient, reference: HubReference, files: list[RemoteFile]) -> list[str]:
    """The data files the card's ``configs`` give ``reference.config_name``; every file if the
    card names no configs (datasets then reads the repository as a whole)."""
    if not any(f.path == CARD for f in files):
        return []
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / CARD
        client.download(reference, CARD, path)
        configs = card_configs(path.read_text(encoding="utf-8", errors="replace"), reference.label)
    try:
        by_split = config_data_files(configs, reference.config_name, reference.label)
    except PipelineError as error:
        raise PipelineError(f"{error}; {', '.join(reference.where)}") from None
    return [pattern for patterns in by_split.values() for pattern in patterns]


def stage_file(client: HubClient, reference: HubReference, remote: RemoteFile, mirror: Path) -> dict[str, Any]:
    """Download one file into the mirror (unless there with the same sha256) and check it."""
    if leaves_its_folder(remote.path):
        raise PipelineError(f"{reference.label}: file {remote.path!r} would be written outside its folder of the mirror")
    destination = mirror_dir(mirror, reference.kind, reference.repo, reference.revision) / remote.path
    before = sha256_file(destination) if destination.is_file() else None
    if before is not None and before == remote.sha256:
        return {"size": remote.size, "sha256": remote.sha256}
    destination.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(destination) as temporary:
        client.download(reference, remote.path, temporary)
        digest = sha256_file(temporary)
        if remote.sha256 is not None and digest != remote.sha256:
            raise PipelineError(f"{reference.label}: {remote.path} downloaded with sha256 {digest}, the source vouches for {remote.sha256}")
    if before is not None and before != digest:  # jobs that read the old bytes rerun: their inputs changed
        logger.warning("%s: %s was sha256 %s in the mirror, the source's is %s: replaced", reference.label, remote.path, before, digest)
    return {"size": destination.stat().st_size, "sha256": digest}
