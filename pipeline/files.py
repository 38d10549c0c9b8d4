"""File helpers every stage shares: atomic writes, JSON/JSONL, checksums.

Outputs are written to a temporary sibling and renamed into place, so an interrupted
stage never leaves a file or directory that looks complete.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import glob
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml
from safetensors import SafetensorError

from pipeline.errors import PipelineError, first_line


def sha256_file(path: str | Path) -> str:
    """sha256 of a file, hashed once per process while it is unchanged: a pretraining job
    reads its initial weights' digest for its resume fingerprint, for their verification and
    for its provenance (GBs at paper scale), and hashes them once."""
    status = os.stat(path)
    return _sha256_of(os.path.realpath(path), status.st_ino, status.st_size, status.st_mtime_ns)


@functools.lru_cache(maxsize=4096)
def _sha256_of(path: str, inode: int, size: int, mtime_ns: int) -> str:
    """Keyed by what changes when the file does (inode, size, mtime): an edit is a new key."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


@contextlib.contextmanager
def atomic_path(final: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``final``; rename it onto ``final`` on success.

    Works for files and directories alike. On error the temporary is removed and
    ``final`` is left untouched. A process killed outright (SIGKILL, out of memory) cannot
    remove its temporary; the next write of ``final`` does, when the process whose id the
    temporary's name holds is gone (Snakemake never runs two jobs for one output).
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(final)
    temporary = Path(tempfile.mkdtemp(prefix=f".{final.name}.{os.getpid()}.", suffix=".tmp", dir=final.parent))
    temporary.rmdir()
    try:
        yield temporary
        if final.is_dir() and not final.is_symlink():
            shutil.rmtree(final)
        os.replace(temporary, final)
    except Exception as error:  # a full disk under any writer (pandas, safetensors, json) names the output
        if not disk_full(error):
            raise
        raise PipelineError(f"{final}: writing it failed, the disk is full ({free_gb(final):.2f} GB free); nothing written") from None
    finally:
        if temporary.is_dir():
            shutil.rmtree(temporary, ignore_errors=True)
        elif temporary.exists():
            temporary.unlink()


@contextlib.contextmanager
def explained_write_failure(path: str | Path) -> Iterator[None]:
    """A failed write of ``path`` (a checkpoint, resumable state) as one line that says how full
    its disk is: torch.save's "PytorchStreamWriter failed writing file" never says "disk"."""
    try:
        yield
    except (OSError, RuntimeError, SafetensorError) as error:
        raise PipelineError(
            f"{path}: writing it failed ({first_line(error)}); {free_gb(path):.2f} GB free on its disk: is the disk full?"
        ) from None


def disk_full(error: BaseException) -> bool:
    """Whether ``error`` is a full disk or quota: an OSError's errno, or the same in the message of
    a writer that wraps it (safetensors' "No space left on device", code 28)."""
    return getattr(error, "errno", None) in (errno.ENOSPC, errno.EDQUOT) or "No space left on device" in str(error)


def free_gb(path: str | Path) -> float:
    """Free space, in GB, on the disk ``path`` is (or would be) on."""
    folder = next(parent for parent in Path(path).absolute().parents if parent.exists())
    return shutil.disk_usage(folder).free / 1e9


def remove_stale_temporaries(final: Path) -> None:
    """Delete the temporaries ``atomic_path`` left beside ``final`` in processes that no longer run."""
    for temporary in final.parent.glob(f".{glob.escape(final.name)}.*.tmp"):
        pid = temporary.name[len(final.name) + 2 :].split(".")[0]
        if not pid.isdigit() or process_is_running(int(pid)):
            continue
        if temporary.is_dir():
            shutil.rmtree(temporary, ignore_errors=True)
        else:
            temporary.unlink(missing_ok=True)


def process_is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: checks the process exists, sends nothing
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True


def write_json(path: str | Path, data: Any) -> None:
    """``data`` as JSON, atomically. NaN and Infinity are not JSON: a value that is one is a
    bug upstream (the stages refuse non-finite losses and scores), refused before anything is written."""
    try:
        text = json.dumps(data, indent=2, sort_keys=True, allow_nan=False)
    except ValueError:
        raise PipelineError(f"{path}: not written, it would hold a non-finite number (NaN or Infinity), which JSON cannot") from None
    with atomic_path(path) as temporary:
        temporary.write_text(text + "\n")


def read_json(path: str | Path) -> Any:
    """A JSON file; a missing or malformed one is one line naming it and, for a file of the
    workflow's results (a truncated scores.json), the command that writes it again."""
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise PipelineError(f"{path}: file not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        what = f"{error.msg} at line {error.lineno}" if isinstance(error, json.JSONDecodeError) else "not UTF-8"
        remedy = f"; write it again: snakemake -f {path}" if RESULTS in path.parts else ""
        raise PipelineError(f"{path}: invalid JSON ({what}){remedy}") from None


RESULTS = "results"  # the folder every job writes under (targets.OUTPUTS)


@contextlib.contextmanager
def previous_outputs_kept(*outputs: str | Path) -> Iterator[None]:
    """When a stage fails, name the outputs it leaves as they were before it ran (each is
    written through :func:`atomic_path`, so only one it had already replaced is not; under
    Snakemake the rule flags them ``update``, and a failed job's are restored whole)."""
    before = {str(path): _modified(path) for path in outputs}
    try:
        yield
    except PipelineError as error:
        kept = [path for path, modified in before.items() if modified is not None and _modified(path) == modified]
        if not kept:
            raise
        raise PipelineError(f"{error} ({', '.join(kept)}: kept as they were before this run)") from None


def outdate(path: str | Path) -> None:
    """Set the modification time of ``path``, and of everything under it, to the epoch's first second: older
    than any input, so that Snakemake redoes the job that made it (a directory output's time is
    its newest file's) while the bytes stay where they are."""
    path = Path(path)
    for item in [*(path.rglob("*") if path.is_dir() else ()), path]:
        os.utime(item, (1, 1), follow_symlinks=False)  # 1, not 0: Snakemake reads a time of 0 as none


def _modified(path: str | Path) -> int | None:
    return os.stat(path).st_mtime_ns if os.path.exists(path) else None


class _UniqueKeyLoader(yaml.SafeLoader):
    """yaml.safe_load's loader, refusing a key given twice in one mapping: PyYAML keeps the last
    silently, so a config's second ``learning_rates:`` would quietly win over its first."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"key {key!r} given twice (line {key_node.start_mark.line + 1})", None)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: str | Path, what: str = "file", mapping: bool = False) -> Any:
    """Parse a YAML file; a missing file, text that is not UTF-8, bad YAML, a key given twice,
    or (``mapping``) a top level that is not a mapping is one line naming it."""
    path = Path(path)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)
    except FileNotFoundError:
        raise PipelineError(f"{path}: {what} not found") from None
    except IsADirectoryError:
        raise PipelineError(f"{path}: a directory, not a {what}") from None
    except OSError as error:
        raise PipelineError(f"{path}: cannot read the {what} ({first_line(error)})") from None
    except UnicodeDecodeError as error:
        raise PipelineError(f"{path}: {what} is not UTF-8 text (byte {error.start})") from None
    except yaml.YAMLError as error:
        raise PipelineError(f"{path}: invalid YAML ({yaml_reason(error)})") from None
    if mapping and not isinstance(data, (dict, type(None))):
        kind = {"list": "a list", "str": "a string", "bool": "true or false"}.get(type(data).__name__, "a number")
        raise PipelineError(f"{path}: a {what} holds a mapping of keys, not {kind}")
    return data


def yaml_reason(error: yaml.YAMLError) -> str:
    """What PyYAML found wrong and where ("line 3, column 5: mapping values are not allowed
    here"), not the caret drawing its message ends with."""
    mark, problem = getattr(error, "problem_mark", None), getattr(error, "problem", None)
    if problem is None:
        return first_line(error)
    if mark is None:
        return problem
    context = getattr(error, "context", None)
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}" + (f" ({context})" if context else "")


def json_line(row: dict) -> str:
    """One row of a JSONL file, newline included."""
    return json.dumps(row, ensure_ascii=False) + "\n"


def write_jsonl(path: str | Path, rows: Iterable[dict]) -> int:
    count = 0
    with atomic_path(path) as temporary:
        with open(temporary, "w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json_line(row))
                count += 1
    return count


def iter_jsonl(path: str | Path, allow_empty: bool = False) -> Iterator[dict]:
    """The rows of a JSONL file one at a time, so that memory does not grow with the file;
    a missing file, or an empty one unless ``allow_empty``, is an error naming it (raised
    when the iteration finds it)."""
    path = Path(path)
    if not path.is_file():
        raise PipelineError(f"{path}: file not found")
    found = False
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise PipelineError(f"{path}:{number}: not UTF-8 text (byte {error.start + 1} of the line)") from None
            if line.strip():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as error:
                    raise PipelineError(f"{path}:{number}: invalid JSON ({error.msg})") from None
                found = True
                yield row
    if not found and not allow_empty:
        raise PipelineError(f"{path}: file is empty")


def read_jsonl(path: str | Path) -> list[dict]:
    """Read a JSONL file whole; a missing or empty file is an error naming it."""
    return list(iter_jsonl(path))
