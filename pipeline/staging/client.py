"""Where staging reads repositories from: the Hugging Face hub (``huggingface_hub``), or a
directory laid out as the hub is (``--from-directory``: another machine's mirror, or the
schema-exact local fixtures the tests and the rehearsal stage from)."""

from __future__ import annotations

import shutil
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from pipeline.errors import PipelineError
from pipeline.files import sha256_file
from pipeline.staging.manifest import files_under, mirror_dir
from pipeline.staging.references import HubReference


@dataclass(frozen=True)
class RemoteFile:
    path: str  # within the repository
    size: int  # bytes
    sha256: str | None  # what the source vouches for (the hub's LFS files), None where it does not


class HubClient:
    serves_the_hub = False  # the hub itself: its row counts are the published ones, a directory's may be a stand-in's

    def commit(self, reference: HubReference) -> str | None:
        """The commit the files are listed and downloaded at, recorded in the manifest; None where
        the source has no commits (a directory)."""
        return None

    def list_files(self, reference: HubReference) -> list[RemoteFile]:
        """Every file of the repository at the reference's revision."""
        raise NotImplementedError

    def download(self, reference: HubReference, path: str, destination: Path) -> None:
        """One file of the repository to ``destination``."""
        raise NotImplementedError


# Revision aliases of hf:// paths, as the hub's API names them.
REVISION_ALIASES = {"~parquet": "refs/convert/parquet"}


class HuggingFaceHub(HubClient):
    """The hub itself; credentials as huggingface_hub finds them (``huggingface-cli login`` for gated repositories)."""

    serves_the_hub = True

    def __init__(self) -> None:
        """Refused at once, in one line, where the hub cannot be reached: huggingface_hub would
        retry each request for ~25 s first, logging every retry (22 lines for config/paper.yaml)."""
        from huggingface_hub import constants

        if constants.HF_HUB_OFFLINE:
            raise PipelineError("the hub is switched off here (HF_HUB_OFFLINE=1); stage from another mirror with --from-directory")
        self.commits: dict[tuple[str, str, str | None], str] = {}
        endpoint = urlparse(constants.ENDPOINT)
        try:
            socket.create_connection((endpoint.hostname, endpoint.port or 443), timeout=10).close()
        except OSError as error:
            raise PipelineError(
                f"the hub ({constants.ENDPOINT}) cannot be reached from here ({error}); stage on a machine that reaches it"
                " (a login node), or from another mirror with --from-directory"
            ) from None

    def commit(self, reference: HubReference) -> str:
        """The commit the reference's revision (``main`` unless pinned) names now, resolved once per
        run: every file of the repository is listed and downloaded at that commit, so a push to the
        hub while staging cannot mix two versions, and the manifest records which one was staged."""
        from huggingface_hub import HfApi

        key = (reference.kind, reference.repo, reference.revision)
        if key not in self.commits:
            try:
                revision = REVISION_ALIASES.get(reference.revision, reference.revision)
                self.commits[key] = HfApi().repo_info(reference.repo, repo_type=reference.kind, revision=revision).sha
            except Exception as error:  # network, gated, missing repository or revision
                raise PipelineError(f"{reference.label}: cannot resolve its revision: {str(error).strip().splitlines()[0]}") from None
        return self.commits[key]

    def list_files(self, reference: HubReference) -> list[RemoteFile]:
        from huggingface_hub import HfApi
        from huggingface_hub.hf_api import RepoFile

        commit = self.commit(reference)
        try:
            tree = HfApi().list_repo_tree(reference.repo, repo_type=reference.kind, revision=commit, recursive=True)
            return [
                RemoteFile(entry.path, entry.size, entry.lfs.sha256 if entry.lfs else None) for entry in tree if isinstance(entry, RepoFile)
            ]
        except Exception as error:  # network, gated, missing repository or revision
            raise PipelineError(f"{reference.label}: cannot list its files: {str(error).strip().splitlines()[0]}") from None

    def download(self, reference: HubReference, path: str, destination: Path) -> None:
        from huggingface_hub import hf_hub_download

        commit = self.commit(reference)
        try:
            fetched = hf_hub_download(reference.repo, path, repo_type=reference.kind, revision=commit)
        except Exception as error:
            raise PipelineError(f"{reference.label}: cannot download {path}: {str(error).strip().splitlines()[0]}") from None
        shutil.copyfile(fetched, destination)


class DirectoryHub(HubClient):
    """``<root>/datasets/<org>/<name>[@<revision>]/...`` and ``<root>/models/...``, as a mirror is laid out."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def repository(self, reference: HubReference) -> Path:
        path = mirror_dir(self.root, reference.kind, reference.repo, reference.revision)
        if not path.is_dir():
            raise PipelineError(f"{reference.label}: not in {self.root} (no directory {path})")
        return path

    def list_files(self, reference: HubReference) -> list[RemoteFile]:
        files = files_under(self.repository(reference), reference.label)  # a link is refused, never staged
        return [RemoteFile(name, path.stat().st_size, sha256_file(path)) for name, path in sorted(files.items())]

    def download(self, reference: HubReference, path: str, destination: Path) -> None:
        shutil.copyfile(self.repository(reference) / path, destination)
