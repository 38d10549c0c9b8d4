"""Where a pinned registry file lies: its URL on a package index's simple API (PEP 503 HTML,
PEP 691 JSON), found by its exact file name, and the file streamed from there.

Nothing is installed, built or imported: ``pip download`` of a source distribution runs its
``setup.py`` to read its metadata before any hash can be checked, so a config naming a hostile
package, or a tampered index serving one, would run code. Here the index is read as a listing,
the file is fetched as bytes and its sha256 compared with the pin before anything opens it
(:mod:`pipeline.data.fetch`).

The index is ``$PIPELINE_INDEX_URL``, else ``$PIP_INDEX_URL``, else PyPI's; ``http``, ``https``
and ``file`` URLs are read (a local mirror is a folder of ``<name>/index.html``). npm tarballs are
found in the npm registry's version document (``<registry>/<name>/<version>``, its
``dist.tarball`` and ``dist.integrity``): ``$PIPELINE_NPM_REGISTRY``, else
``$NPM_CONFIG_REGISTRY``, else registry.npmjs.org. Proxies come from the usual ``https_proxy``
variables.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import posixpath
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from pipeline.errors import PipelineError

INDEX_VARIABLES = ("PIPELINE_INDEX_URL", "PIP_INDEX_URL")
PYPI = "https://pypi.org/simple/"
NPM_VARIABLES = ("PIPELINE_NPM_REGISTRY", "NPM_CONFIG_REGISTRY")
NPM = "https://registry.npmjs.org/"
SHA512_INTEGRITY = "sha512-"
SCHEMES = ("http", "https", "file")
ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"
TIMEOUT_SECONDS = 60
CHUNK = 1 << 20


@dataclass(frozen=True)
class IndexedFile:
    url: str
    sha256: str | None  # what the index vouches for, where it publishes a hash
    sha512: str | None = None  # hex; npm vouches for a tarball by its sha512 (dist.integrity)


def index_url() -> str:
    return _configured(INDEX_VARIABLES, PYPI)


def npm_registry_url() -> str:
    return _configured(NPM_VARIABLES, NPM)


def _configured(variables: tuple[str, ...], default: str) -> str:
    url = next((os.environ[name] for name in variables if os.environ.get(name)), default)
    return url if url.endswith("/") else url + "/"


def normalized(project: str) -> str:
    """PEP 503's name: runs of ``-``, ``_``, ``.`` as one ``-``, lower case."""
    return re.sub(r"[-_.]+", "-", project).lower()


def locate(project: str, filename: str) -> IndexedFile:
    """The index's entry for ``filename`` among ``project``'s files; PipelineError if it lists none."""
    page = urllib.parse.urljoin(index_url(), normalized(project) + "/")
    body, content_type = _read(page)
    entries = _json_entries(body, page) if "json" in content_type else _html_entries(body, page)
    if filename not in entries:
        raise PipelineError(f"{page}: the index lists no {filename} for {project} ({len(entries)} files listed)")
    return entries[filename]


def locate_npm(project: str, version: str, filename: str) -> IndexedFile:
    """The npm registry's tarball of ``project`` at ``version``, which must be ``filename``, and
    the sha512 the registry vouches for; PipelineError if the registry has no such version."""
    url = urllib.parse.urljoin(npm_registry_url(), f"{urllib.parse.quote(project, safe='@/')}/{urllib.parse.quote(version)}")
    body, _ = _read(url)
    try:
        dist = json.loads(body)["dist"]
        tarball, integrity = dist["tarball"], dist.get("integrity") or ""
        if not isinstance(tarball, str) or not isinstance(integrity, str):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        raise PipelineError(f"{url}: not an npm version document (no dist.tarball)") from None
    tarball = urllib.parse.urljoin(url, tarball)
    if posixpath.basename(urllib.parse.urlsplit(tarball).path) != filename:
        raise PipelineError(f"{url}: its tarball is {tarball}, not the pinned {filename}; nothing downloaded")
    sha512 = None
    if integrity.startswith(SHA512_INTEGRITY):
        try:
            sha512 = base64.b64decode(integrity.removeprefix(SHA512_INTEGRITY), validate=True).hex()
        except ValueError:
            raise PipelineError(f"{url}: dist.integrity {integrity[:40]!r} is not base64") from None
    return IndexedFile(tarball, None, sha512)


def download(entry: IndexedFile, destination: Path, max_bytes: int) -> tuple[str, str]:
    """Stream ``entry`` into ``destination``, at most ``max_bytes`` of it (PipelineError at the
    first byte beyond); its sha256 and sha512 (hex). A body that ends before its Content-Length, or
    a connection lost while reading, is a cut download, said as such (not as a changed file)."""
    sha256, sha512 = hashlib.sha256(), hashlib.sha512()
    written = 0
    with _open(entry.url) as response, open(destination, "wb") as out:
        announced = response.headers.get("Content-Length")
        try:
            while chunk := response.read(CHUNK):
                written += len(chunk)
                if written > max_bytes:
                    raise PipelineError(f"{entry.url}: more than the {max_bytes:,} bytes expected of it; stopped, nothing kept")
                sha256.update(chunk)
                sha512.update(chunk)
                out.write(chunk)
        except (http.client.HTTPException, OSError) as error:
            raise PipelineError(
                f"{entry.url}: the download was cut after {written:,} bytes ({type(error).__name__}); nothing kept: rerun"
            ) from None
    if announced is not None and announced.isdigit() and written < int(announced):
        raise PipelineError(f"{entry.url}: the download was cut after {written:,} of its {int(announced):,} bytes; nothing kept: rerun")
    return sha256.hexdigest(), sha512.hexdigest()


def _open(url: str):
    scheme = urllib.parse.urlsplit(url).scheme
    if scheme not in SCHEMES:
        raise PipelineError(f"{url}: not read ({scheme or 'no'} scheme; the index and its files are read over {', '.join(SCHEMES)})")
    if scheme == "file" and url.endswith("/"):  # a local mirror's project folder: its index.html
        url += "index.html"
    try:
        return urllib.request.urlopen(urllib.request.Request(url, headers={"Accept": ACCEPT}), timeout=TIMEOUT_SECONDS)
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", None) or error
        raise PipelineError(f"{url}: cannot read it ({reason})") from None


def _read(url: str) -> tuple[bytes, str]:
    with _open(url) as response:
        return response.read(), response.headers.get("Content-Type") or ""


def _json_entries(body: bytes, page: str) -> dict[str, IndexedFile]:
    try:
        files = json.loads(body)["files"]
        return {f["filename"]: IndexedFile(urllib.parse.urljoin(page, f["url"]), f.get("hashes", {}).get("sha256")) for f in files}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise PipelineError(f"{page}: not a simple-API JSON listing (PEP 691)") from None


def _html_entries(body: bytes, page: str) -> dict[str, IndexedFile]:
    """PEP 503: one ``<a href="URL#sha256=HEX">filename</a>`` per file."""
    anchors = _Anchors()
    anchors.feed(body.decode("utf-8", errors="replace"))
    entries = {}
    for href, text in anchors.found:
        url, _, fragment = urllib.parse.urljoin(page, href).partition("#")
        kind, _, value = fragment.partition("=")
        entries[text.strip()] = IndexedFile(url, value if kind == "sha256" else None)
    return entries


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str]] = []
        self._href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href = dict(attrs).get("href")
            self.found.append((self._href or "", ""))

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self.found[-1] = (self.found[-1][0], self.found[-1][1] + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._href = None
