"""A tokenizer saved beside a model or by ``train-tokenizer``, loaded from its directory only.

``AutoTokenizer.from_pretrained`` takes a path that does not exist for a hub id and fails
with a hub error (``Repo id must be in the form 'repo_name'...``) that hides what happened:
a local checkpoint went missing. Every stage that reads a directory made by this workflow
loads through here, so that case is one line naming the directory and the way back.

Its files are verified first, as weights are (:mod:`pipeline.integrity`): every stage that saves a
tokenizer (train-tokenizer, initialize, pretrain's model and checkpoints, import-model) records
their sha256 in its provenance.json, so ids rewritten in a model's ``tokenizer.json`` are refused
in one line instead of fine-tuning on them.
"""

from __future__ import annotations

from pathlib import Path

from transformers import AutoTokenizer, PreTrainedTokenizerBase

from pipeline.errors import PipelineError, first_line
from pipeline.integrity import verify_recorded

# What save_pretrained writes of a tokenizer (the fast tokenizer's and the files beside it).
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json", "chat_template.jinja")


def tokenizer_files(directory: Path) -> list[Path]:
    """The tokenizer's files in ``directory``: what a stage that saved one records and a stage that loads one verifies."""
    return [directory / name for name in TOKENIZER_FILES if (directory / name).is_file()]


def load_saved_tokenizer(directory: str | Path) -> PreTrainedTokenizerBase:
    path = Path(directory)
    if not path.is_dir():
        raise PipelineError(f"{path}: directory missing; rerun the job that writes it (snakemake --forcerun <rule> or -f <its output>)")
    for file in tokenizer_files(path):
        verify_recorded(file)
    # A directory this workflow wrote holds a tokenizer transformers ships: no repository code runs.
    try:
        return AutoTokenizer.from_pretrained(path, local_files_only=True, trust_remote_code=False)
    except (OSError, ValueError, TypeError, KeyError) as error:  # not JSON, a broken vocabulary, a missing file
        raise PipelineError(f"{path}: cannot load its tokenizer ({type(error).__name__}: {first_line(error)})") from None
