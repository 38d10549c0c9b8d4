"""fetch: cache reuse, sha256 verification, extraction, pip errors; never the network."""

from __future__ import annotations

import hashlib
import io
import json
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from pipeline.__main__ import main
from pipeline.config import ArtifactSpec
from pipeline.data.fetch import CACHE_VARIABLE, download_cache, pip_command

WHEEL = "toypkg-1.0-py3-none-any.whl"
SDIST = "toypkg-1.0.tar.gz"


def make_wheel(path: Path) -> None:
    """A minimal valid wheel: pip reads its metadata when it serves it from --find-links."""
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("toypkg/data/words.txt", "alpha beta\n")
        wheel.writestr("toypkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: toypkg\nVersion: 1.0\n")
        wheel.writestr("toypkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        wheel.writestr("toypkg-1.0.dist-info/RECORD", "")


def make_sdist(path: Path) -> None:
    with tarfile.open(path, "w:gz") as sdist:
        data = b"alpha beta\n"
        member = tarfile.TarInfo("toypkg-1.0/data/words.txt")
        member.size = len(data)
        sdist.addfile(member, io.BytesIO(data))


def spec_json(filename: str, sha256: str, distribution: str = "wheel") -> str:
    return json.dumps(
        {
            "requirement": "toypkg==1.0",
            "filename": filename,
            "sha256": sha256,
            "distribution": distribution,
            "license": "MIT",
            "origin": "a test",
        }
    )


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv(CACHE_VARIABLE, str(cache))
    return cache


def test_a_cached_wheel_is_verified_extracted_and_described(cache, tmp_path):
    make_wheel(cache / WHEEL)
    out = tmp_path / "results" / "sources" / "toy"
    assert main(["fetch", "--name", "toy", "--spec", spec_json(WHEEL, sha256(cache / WHEEL)), "--out", str(out)]) == 0
    assert (out / "extracted" / "toypkg" / "data" / "words.txt").read_text() == "alpha beta\n"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest == {
        "name": "toy",
        "requirement": "toypkg==1.0",
        "filename": WHEEL,
        "sha256": sha256(cache / WHEEL),
        "license": "MIT",
        "origin": "a test",
        "distribution": "wheel",
        "num_files": 4,
    }
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["inputs"]["artifact"]["sha256"] == manifest["sha256"]
    assert sorted(p.name for p in out.parent.iterdir()) == ["toy"]  # no temporary left beside it


@pytest.fixture
def local_index(tmp_path, monkeypatch) -> Path:
    """A --find-links folder standing in for PyPI, so the download path runs offline."""
    index = tmp_path / "index"
    index.mkdir()
    make_wheel(index / WHEEL)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    return index


def test_a_wheel_not_in_the_cache_is_downloaded_into_it(cache, local_index, tmp_path):
    digest = sha256(local_index / WHEEL)
    assert main(["fetch", "--name", "toy", "--spec", spec_json(WHEEL, digest), "--out", str(tmp_path / "toy")]) == 0
    assert [p.name for p in cache.iterdir()] == [WHEEL]
    assert sha256(cache / WHEEL) == digest


def test_a_download_under_another_name_is_an_error(cache, local_index, tmp_path, capsys):
    spec = spec_json("toypkg-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", "ab" * 32)
    assert main(["fetch", "--name", "toy", "--spec", spec, "--out", str(tmp_path / "toy")]) == 2
    assert capsys.readouterr().err == (
        f"error: pip download toypkg==1.0 returned {WHEEL}, not the pinned toypkg-1.0-cp311-cp311-manylinux_2_28_x86_64.whl\n"
    )
    assert list(cache.iterdir()) == []


def test_a_cached_sdist_is_extracted_with_its_top_folder(cache, tmp_path):
    make_sdist(cache / SDIST)
    out = tmp_path / "toy"
    assert main(["fetch", "--name", "toy", "--spec", spec_json(SDIST, sha256(cache / SDIST), "sdist"), "--out", str(out)]) == 0
    assert (out / "extracted" / "toypkg-1.0" / "data" / "words.txt").read_text() == "alpha beta\n"


def test_a_cached_file_that_does_not_match_is_refused_and_left_alone(cache, tmp_path, capsys):
    (cache / WHEEL).write_bytes(b"not the wheel we pinned")
    actual = sha256(cache / WHEEL)
    out = tmp_path / "toy"
    assert main(["fetch", "--name", "toy", "--spec", spec_json(WHEEL, "ab" * 32), "--out", str(out)]) == 2
    message = capsys.readouterr().err
    assert message == (
        f"error: {cache / WHEEL}: sha256 {actual} does not match the pinned {'ab' * 32}; this harness did not put it there"
        " and leaves it alone: move or delete it, and the rerun downloads the pinned file\n"
    )
    assert (cache / WHEEL).read_bytes() == b"not the wheel we pinned"
    assert not out.exists()


def test_a_download_that_does_not_match_never_enters_the_cache(cache, local_index, tmp_path, capsys):
    digest = sha256(local_index / WHEEL)
    assert main(["fetch", "--name", "toy", "--spec", spec_json(WHEEL, "ab" * 32), "--out", str(tmp_path / "toy")]) == 2
    assert capsys.readouterr().err == f"error: pip download toypkg==1.0: {WHEEL} has sha256 {digest}, not the pinned {'ab' * 32}\n"
    assert list(cache.iterdir()) == []


@pytest.mark.parametrize("filename", ["/etc/passwd", "../../outside.whl", "a/b.whl", "..", ".hidden", "a\\b.whl", "x..whl"])
def test_a_filename_that_is_not_a_bare_name_is_refused_and_nothing_is_touched(cache, tmp_path, capsys, filename):
    victim = tmp_path / "outside.whl"
    victim.write_bytes(b"a file of the user's")
    spec = spec_json(filename, "ab" * 32)
    assert main(["fetch", "--name", "toy", "--spec", spec, "--out", str(tmp_path / "work" / "results" / "sources" / "toy")]) == 2
    assert capsys.readouterr().err == (
        f"error: sources.toy: filename {filename!r} must be a bare file name (letters, digits, '.', '_', '+', '-'; no path)\n"
    )
    assert victim.read_bytes() == b"a file of the user's"
    assert list(cache.iterdir()) == []


def test_a_requirement_pip_would_read_as_an_option_is_refused(tmp_path, capsys):
    spec = json.loads(spec_json(WHEEL, "ab" * 32))
    spec["requirement"] = "--index-url=https://elsewhere.example/simple"
    assert main(["fetch", "--name", "toy", "--spec", json.dumps(spec), "--out", str(tmp_path / "toy")]) == 2
    assert capsys.readouterr().err == f"error: sources.toy: requirement {spec['requirement']!r} would be read by pip as an option\n"


def test_a_pip_failure_names_the_requirement_and_pips_last_line(cache, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # pip must not reach for the network
    spec = json.loads(spec_json(WHEEL, "ab" * 32))
    spec["requirement"] = "toy pkg ==1"
    assert main(["fetch", "--name", "toy", "--spec", json.dumps(spec), "--out", str(tmp_path / "toy")]) == 2
    assert capsys.readouterr().err.startswith("error: pip download toy pkg ==1 failed: ERROR: Invalid requirement")
    assert list(cache.iterdir()) == []  # the scratch download folder is gone


def test_bad_spec_json_and_bad_keys_are_one_line_errors(tmp_path, capsys):
    assert main(["fetch", "--name", "toy", "--spec", "{not json", "--out", str(tmp_path / "toy")]) == 2
    assert capsys.readouterr().err.startswith("error: sources.toy: --spec is not valid JSON")
    bad = json.loads(spec_json(WHEEL, "AB" * 32))
    assert main(["fetch", "--name", "toy", "--spec", json.dumps(bad), "--out", str(tmp_path / "toy")]) == 2
    assert "sources.toy: sha256 'ABAB" in capsys.readouterr().err


def test_pip_command_asks_for_the_pinned_kind_of_file(tmp_path):
    wheel = ArtifactSpec(
        "gensim==4.4.0",
        "g.whl",
        "ab" * 32,
        "wheel",
        "LGPL",
        "x",
        platform="manylinux_2_28_x86_64",
        python_version="3.11",
    )
    assert pip_command(wheel, tmp_path)[1:] == [
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--disable-pip-version-check",
        "--dest",
        str(tmp_path),
        "--only-binary",
        ":all:",
        "--platform",
        "manylinux_2_28_x86_64",
        "--implementation",
        "cp",
        "--python-version",
        "3.11",
        "gensim==4.4.0",
    ]
    sdist = ArtifactSpec("vaderSentiment==3.3.2", "v.tar.gz", "ab" * 32, "sdist", "MIT", "x")
    assert pip_command(sdist, tmp_path)[0] == sys.executable
    assert pip_command(sdist, tmp_path)[-3:] == ["--no-binary", ":all:", "vaderSentiment==3.3.2"]


def test_the_default_cache_is_results_downloads(tmp_path, monkeypatch):
    monkeypatch.delenv(CACHE_VARIABLE, raising=False)
    assert download_cache(tmp_path / "results" / "sources" / "toy") == (tmp_path / "results" / "downloads").resolve()
