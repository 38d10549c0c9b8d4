"""A tokenizer saved beside a model or by ``train-tokenizer``, loaded from its directory only.

``AutoTokenizer.from_pretrained`` takes a path that does not exist for a hub id and fails
with a hub error (``Repo id must be in the form 'repo_name'...``) that hides what happened:
a local checkpoint went missing. Every stage that reads a directory made by this workflow
loads through here, so that case is one line naming the directory and the way back.
"""

from __future__ import annotations

from pathlib import Path

from transformers import AutoTokenizer, PreTrainedTokenizerBase

from pipeline.errors import PipelineError


def load_saved_tokenizer(directory: str | Path) -> PreTrainedTokenizerBase:
    path = Path(directory)
    if not path.is_dir():
        raise PipelineError(f"{path}: directory missing; rerun the job that writes it (snakemake --forcerun <rule> or -f <its output>)")
    # A directory this workflow wrote holds a tokenizer transformers ships: no repository code runs.
    return AutoTokenizer.from_pretrained(path, local_files_only=True, trust_remote_code=False)
