"""A dataset card's ``configs``: which data files each config name reads, split by split.

The hub's dataset repositories say in their card's YAML header which files make a config
(GLUE's ``sst2`` is ``sst2/train-*`` and so on; FineWeb-Edu's ``sample-100BT`` is
``sample/100BT/*``). Staging reads it to download only those files; a job reading the mirror
reads it to open exactly those files (and verify them) instead of handing the whole
repository to ``datasets``.
"""

from __future__ import annotations

from typing import Any

import yaml

from pipeline.errors import PipelineError

CARD = "README.md"


def card_configs(text: str, label: str) -> list[dict[str, Any]]:
    """The ``configs`` list of a card's YAML header, [] without one."""
    if not text.startswith("---"):
        return []
    header = text.split("---", 2)[1]
    try:
        metadata = yaml.safe_load(header) or {}
    except yaml.YAMLError as error:
        raise PipelineError(f"{label}: its card's YAML header does not parse ({error})") from None
    if not isinstance(metadata, dict):
        raise PipelineError(f"{label}: its card's YAML header is a {type(metadata).__name__}, not a mapping of metadata")
    configs = metadata.get("configs", [])
    if not isinstance(configs, list) or not all(isinstance(entry, dict) for entry in configs):
        raise PipelineError(f"{label}: its card's 'configs' is not a list of mappings (config_name, data_files)")
    return configs


def config_data_files(configs: list[dict[str, Any]], config_name: str | None, label: str) -> dict[str | None, list[str]]:
    """Split (None where the card names none) -> the file patterns the card gives ``config_name``
    ("default" when None); {} for a card without configs. An unknown name is one line naming the known."""
    if not configs:
        return {}
    wanted = config_name or "default"
    for entry in configs:
        if entry.get("config_name") == wanted:
            data_files = entry.get("data_files", [])
            patterns: dict[str | None, list[str]] = {}
            for item in data_files if isinstance(data_files, list) else [data_files]:
                split, paths = (item.get("split"), item.get("path", [])) if isinstance(item, dict) else (None, item)
                patterns.setdefault(split, []).extend([paths] if isinstance(paths, str) else list(paths))
            return patterns
    if config_name is None:  # no "default" config: datasets reads the repository as a whole
        return {}
    names = ", ".join(str(entry.get("config_name")) for entry in configs)
    raise PipelineError(f"{label}: its card has no config {wanted!r} (configs: {names})")
