"""``hub_mirror: DIR``: every hub repository a config reads, read from a mirror that
``python -m pipeline stage`` filled instead (a cluster's compute nodes are usually offline).

The layout is the hub's: ``DIR/datasets/<org>/<name>`` and ``DIR/models/<org>/<name>``
(``@<revision>`` appended to the name where a config pins one), so a dataset repository loads
as a local directory (its card's configs included) and ``hf://datasets/...`` data files become
paths under it. The config is rewritten when it is resolved: a dataset source keeps what it
names and learns where to read it (``HubSpec.mirror``, read at load time by
:mod:`pipeline.data.sources.mirror`, beside the readers), a
model's path becomes its local directory; a repository that was not staged stops the plan in
one line naming it and the key that reads it. ``DIR/manifest.json`` lists what was staged, each
file with its size and sha256.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pipeline.config import Config, HubSpec
from pipeline.errors import PipelineError
from pipeline.staging.manifest import MANIFEST, mirror_dir, read_manifest
from pipeline.staging.references import Kind, hf_files, is_hub_id, with_hub_paths


def mirrored(config: Config, mirror: str, origin: str) -> Config:
    """The config reading every hub repository from ``mirror``; PipelineError for one not staged."""
    if not (Path(mirror) / MANIFEST).is_file():
        raise PipelineError(f"{origin}.hub_mirror: {mirror} holds no {MANIFEST}; stage it first: python -m pipeline stage --to {mirror}")
    read_manifest(Path(mirror) / MANIFEST)  # a malformed one stops the plan, not a job

    def staged(kind: Kind, repo: str, revision: str | None, where: str) -> Path:
        path = mirror_dir(mirror, kind, repo, revision)
        if not path.is_dir():
            raise PipelineError(
                f"{origin}.{where}: {kind} {repo}{'@' + revision if revision else ''} is not in the mirror {mirror}; "
                f"stage it on a machine with hub access: python -m pipeline stage --to {mirror} --configfile ..."
            )
        return path

    def dataset(where: str, spec: HubSpec) -> HubSpec:
        if is_hub_id(spec.path):
            staged("dataset", spec.path, None, f"{where}.path")
        for split, matched in hf_files(spec):
            staged("dataset", matched["repo"], matched["revision"], f"{where}.data_files.{split}")
        return dataclasses.replace(spec, mirror=mirror)

    def model(where: str, path: str, revision: str | None) -> tuple[str, str | None]:
        """A staged model's local directory, which is at its revision already; others as they are."""
        return (str(staged("model", path, revision, where)), None) if is_hub_id(path) else (path, revision)

    return with_hub_paths(config, dataset, model)
