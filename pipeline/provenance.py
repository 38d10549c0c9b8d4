"""What every output directory records about how it was made.

``provenance.json`` holds the resolved spec the stage ran with, the code version (git
commit plus a hash of the package source, so uncommitted edits show), the versions of
the packages that shape the numbers, the machine that computed them, the sha256 of every
input, and that of every output a later stage verifies before it reads it
(:mod:`pipeline.integrity`).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pipeline import cpu_paths
from pipeline.files import sha256_file, write_json

PACKAGE_ROOT = Path(__file__).resolve().parent
TRACKED_PACKAGES = ("torch", "transformers", "tokenizers", "datasets", "numpy", "pandas", "snakemake")


def source_hash() -> str:
    """sha256 (first 16 hex) of the package's whole Python source: the code version a
    provenance record names (each rule's own code param: pipeline/code_graph.py)."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        digest.update(str(path.relative_to(PACKAGE_ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def code_version() -> dict[str, Any]:
    """The package's code version: the sha256 of its source always, and the commit and whether the
    tree differs from it where the package sits in this project's own git checkout. A copy of the
    tree inside another repository (a GPU machine's work folder) gets no commit, not that repository's."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=PACKAGE_ROOT, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    own = top is not None and Path(top).resolve() == PACKAGE_ROOT.parent
    status = git("status", "--porcelain", "--", ".") if own else None
    return {
        "git_commit": git("rev-parse", "HEAD") if own else None,
        "git_dirty": bool(status) if status is not None else None,
        "source_sha256": source_hash(),
    }


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


def machine() -> dict[str, Any]:
    """The processor, the CPU code paths in force and the vector instructions torch's kernels use,
    behind the numbers. Under the processor's own paths the same code, config and seed give the
    same floats on one machine only: kernels round differently per ISA and vendor (~1e-7 a step),
    which MLM's pretraining amplifies to ~3e-3 in held-out loss over 2,000 steps; the portable
    paths (:mod:`pipeline.cpu_paths`) are what makes two x86-64 processors agree."""
    record: dict[str, Any] = {"processor": processor_name(), "cores": os.cpu_count(), "cpu_paths": cpu_paths.in_force()}
    torch = sys.modules.get("torch")  # only where the job computed with it: importing it costs a data job seconds
    if torch is not None:
        record["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
        if torch.cuda.is_initialized():
            record["gpu"] = torch.cuda.get_device_name()
    return record


def processor_name() -> str:
    """The CPU's model name (Linux's /proc/cpuinfo), else what the platform reports."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def checksum(path: str | Path) -> str:
    """sha256 of a file, or of a directory's (relative path, file sha256) listing."""
    path = Path(path)
    if path.is_file():
        return sha256_file(path)
    digest = hashlib.sha256()
    for child in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(f"{child.relative_to(path)}\0{sha256_file(child)}\n".encode())
    return digest.hexdigest()


def write_provenance(out_dir: str | Path, spec: Any, inputs: dict[str, str | Path], outputs: Sequence[Path] = (), **extra: Any) -> None:
    """Write ``out_dir/provenance.json``; ``inputs`` maps a role to a file or directory;
    ``outputs``, files under ``out_dir`` that later stages verify (:mod:`pipeline.integrity`),
    are listed with their sha256 by path relative to it."""
    out_dir = Path(out_dir)
    write_json(
        out_dir / "provenance.json",
        {
            "spec": spec,
            "code": code_version(),
            "packages": package_versions(),
            "machine": machine(),
            "inputs": {role: {"path": str(p), "sha256": checksum(p)} for role, p in inputs.items()},
            **({"outputs": {Path(p).relative_to(out_dir).as_posix(): sha256_file(p) for p in outputs}} if outputs else {}),
            **extra,
        },
    )
