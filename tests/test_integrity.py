"""Checksums end to end: weights, token arrays and task splits changed after they were
written are refused by the stage about to read them, in one line naming the file, both
hashes and the job to rerun."""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct

import pytest

from pipeline.__main__ import main
from pipeline.errors import PipelineError
from pipeline.files import read_json
from pipeline.integrity import VERIFY_TOKENS
from tests.conftest import pretrain_spec_json
from tests.test_finetune import finetune_spec, make_task
from tests.test_pretrain import pretrain

MISMATCH = (
    r"error: {path}: sha256 [0-9a-f]{{64}} is not the [0-9a-f]{{64}} {where} when it was written; it changed since: rerun the job "
    r"that made {made_by} \(snakemake -f <its output>\)"
)


def pretrained(tokens_dir, init_dir, root):
    spec = pretrain_spec_json({"kind": "clm"}, budget_steps=4, checkpoint_steps=[2])
    return pretrain(spec, tokens_dir, init_dir, root)


def zero_first_tensor(path):
    """Zero the bytes of the first tensor of a safetensors file, its header left intact."""
    data = bytearray(path.read_bytes())
    header_size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8 : 8 + header_size])
    start, stop = next(entry["data_offsets"] for name, entry in header.items() if name != "__metadata__")
    data[8 + header_size + start : 8 + header_size + stop] = bytes(stop - start)
    path.write_bytes(bytes(data))


def last_error_line(capsys) -> str:
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_weights_changed_after_pretraining_are_refused_by_fine_tuning(tokens_dir, init_dir, tmp_path, capsys):
    run = pretrained(tokens_dir, init_dir, tmp_path)
    recorded = read_json(run / "provenance.json")["outputs"]
    tokenizers = {
        f"{folder}/{name}" for folder in ("model", "checkpoints/step-000002") for name in ("tokenizer.json", "tokenizer_config.json")
    }
    weights = {"model/model.safetensors", "checkpoints/step-000002/model.safetensors"}
    assert set(recorded) == {*weights, "model/README.md", "summary.json", *tokenizers}  # the model card too
    task = make_task(tmp_path / "task")
    for model in (run / "model", run / "checkpoints" / "step-000002"):
        zero_first_tensor(model / "model.safetensors")
        capsys.readouterr()
        argv = ["finetune", "--spec", finetune_spec(), "--model", str(model), "--task-dir", str(task), "--out", str(tmp_path / "ft")]
        assert main(argv) == 2
        pattern = MISMATCH.format(
            path=re.escape(str(model / "model.safetensors")),
            where=re.escape(f"{run / 'provenance.json'} recorded"),
            made_by=re.escape(str(run)),
        )
        assert re.fullmatch(pattern, last_error_line(capsys))
        assert not (tmp_path / "ft").exists()


def test_a_token_array_changed_after_packing_is_refused_unless_verification_is_off(tokens_dir, init_dir, tmp_path, capsys, monkeypatch):
    import shutil

    tokens = tmp_path / "tokens"
    shutil.copytree(tokens_dir, tokens)
    segment = read_json(tokens / "meta.json")["splits"]["train"]["segments"][0]
    array = tokens / segment["file"]
    data = bytearray(array.read_bytes())
    data[0] ^= 1  # one token id changed, the size the same
    array.write_bytes(bytes(data))
    spec = pretrain_spec_json({"kind": "clm"}, budget_steps=2)
    argv = ["pretrain", "--spec", spec, "--tokens", str(tokens), "--init", str(init_dir), "--work-dir", str(tmp_path / "work")]
    capsys.readouterr()
    assert main([*argv, "--out", str(tmp_path / "run")]) == 2
    pattern = MISMATCH.format(
        path=re.escape(str(array)), where=re.escape(f"{tokens / 'meta.json'} lists"), made_by=re.escape(str(array.parent))
    )
    assert re.fullmatch(pattern, last_error_line(capsys))
    monkeypatch.setenv(VERIFY_TOKENS, "0")  # hardware.verify_token_checksums: false
    assert main([*argv, "--out", str(tmp_path / "unchecked")]) == 0


@pytest.mark.parametrize("split", ["train", "test"])
def test_a_task_split_changed_after_preparation_is_refused(split, tmp_path, init_dir, capsys):
    task = make_task(tmp_path / "task")
    from pipeline.provenance import write_provenance

    write_provenance(task, {}, {}, outputs=[task / f"{name}.jsonl" for name in ("train", "validation", "test")])
    path = task / f"{split}.jsonl"
    path.write_text(path.read_text().replace('"label": 0', '"label": 1', 1))
    argv = ["finetune", "--spec", finetune_spec(), "--model", str(init_dir), "--task-dir", str(task), "--out", str(tmp_path / "ft")]
    assert main(argv) == 2
    pattern = MISMATCH.format(
        path=re.escape(str(path)), where=re.escape(f"{task / 'provenance.json'} recorded"), made_by=re.escape(str(task))
    )
    assert re.fullmatch(pattern, last_error_line(capsys))


def test_token_arrays_are_hashed_once_until_their_bytes_are_rewritten(tmp_path):
    """A stamp of size, mtime and inode spares the next job the hashing; a rewrite hashes again,
    and a rewrite with other bytes is refused as before."""
    from pipeline.integrity import verify_digest_once

    array, stamps = tmp_path / "train-0.bin", tmp_path / "integrity"
    array.write_bytes(b"\x01\x02" * 1000)
    digest = hashlib.sha256(array.read_bytes()).hexdigest()
    assert verify_digest_once(array, digest, "meta.json lists", tmp_path, stamps) is True
    assert verify_digest_once(array, digest, "meta.json lists", tmp_path, stamps) is False
    array.write_bytes(b"\x01\x02" * 1000)  # the same bytes, written again: hashed again
    os.utime(array, ns=(array.stat().st_atime_ns, array.stat().st_mtime_ns + 1))
    assert verify_digest_once(array, digest, "meta.json lists", tmp_path, stamps) is True
    array.write_bytes(b"\x02\x02" * 1000)
    os.utime(array, ns=(array.stat().st_atime_ns, array.stat().st_mtime_ns + 2))
    with pytest.raises(PipelineError, match="is not the .* meta.json lists when it was written"):
        verify_digest_once(array, digest, "meta.json lists", tmp_path, stamps)
