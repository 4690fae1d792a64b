"""A local stand-in for the Hugging Face Hub: the bundled model's files over HTTP on 127.0.0.1.

huggingface_hub sends every request to its HF_ENDPOINT, so a process started with
HF_ENDPOINT=<stand-in url> (and a fresh HF_HOME) downloads from here what it would download from the
Hub. Served, as the Hub serves them to huggingface_hub's hf_hub_download:

    HEAD|GET /{repo_id}/resolve/{revision}/{filename}

with the headers huggingface_hub reads: X-Repo-Commit (the commit), ETag (a git blob sha1 for small
files; for the LFS weights file its sha256, also as X-Linked-Etag with X-Linked-Size), Content-Length,
and Range requests (a resumed download gets 206). Errors carry the Hub's X-Error-Code: RepoNotFound
(401), RevisionNotFound and EntryNotFound (404). The one difference: the Hub answers an LFS file's
HEAD with a redirect to its CDN, and the stand-in serves it itself.

Modes (`HubStandIn.mode`, changeable while it runs):
- "normal": the files as they are;
- "corrupt": model.safetensors with one byte changed (same size and ETag: damage on the way);
- "drop": the first GET of model.safetensors sends half the file and closes the connection, and
  every later request for it is closed before any answer (the network went away mid-download).
A closed port ("no server") is `closed_endpoint()`.

More repositories (`repos={"gpt2": folder, ...}`, every file of each folder, read from disk as it is
sent) are served in "normal" mode alone, at the revision "main" or their own commit (a hash of their
files), with the two API calls that huggingface_hub's snapshot_download makes first (the registry's
Hub downloads use it): GET /api/models/{repo_id}/revision/{revision} (the commit, as "sha") and
GET /api/models/{repo_id}/tree/{commit} (the file list, *.safetensors as LFS files). The Cloud
simulation serves random GPT-2 checkpoints of the curated decoders' sizes so (tests/real_size_gpt2.py).

Run alone: python -m tests.hub_standin [--port N] [--mode normal]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from core.models.bundled import BUNDLED_FILES, BUNDLED_HUB_ID, BUNDLED_REVISION, bundled_model_dir, sha256_of

LFS_FILES = {"model.safetensors"}  # stored with git LFS on the Hub: ETag is the file's sha256
MODES = ("normal", "corrupt", "drop")
_REPO = r"(?P<repo>(?:[^/]+/)?[^/]+)"  # "owner/name" or a legacy "name" ("gpt2")
_RESOLVE = re.compile(rf"^/{_REPO}/resolve/(?P<rev>[^/]+)/(?P<name>[^?#]+)")
_API = re.compile(rf"^/api/models/{_REPO}/(?P<what>revision|tree)/(?P<rev>[^/?#]+)")
_RANGE = re.compile(r"^bytes=(\d+)-(\d*)$")


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class ServedRepo:
    """One more repository: every file of `folder`, its ETags and a commit derived from them."""

    def __init__(self, folder: Path):
        self.paths = {p.name: p for p in sorted(Path(folder).iterdir()) if p.is_file()}
        self.sizes = {name: path.stat().st_size for name, path in self.paths.items()}
        self.etags = {
            name: sha256_of(path) if name.endswith(".safetensors") else git_blob_sha1(path.read_bytes())
            for name, path in self.paths.items()
        }
        files = "".join(sorted(self.etags.values())).encode()
        self.commit = hashlib.sha1(files, usedforsecurity=False).hexdigest()

    def tree(self) -> list[dict]:
        """The Hub's tree listing of the repository (what list_repo_tree reads)."""
        entries = []
        for name, size in self.sizes.items():
            entry = {"type": "file", "path": name, "size": size, "oid": self.etags[name]}
            if name.endswith(".safetensors"):  # an LFS file: the blob is its pointer, the oid its sha256
                oid = f"sha256:{self.etags[name]}"
                pointer = f"version https://git-lfs.github.com/spec/v1\noid {oid}\nsize {size}\n"
                entry["oid"] = git_blob_sha1(pointer.encode())
                entry["lfs"] = {"oid": self.etags[name], "size": size, "pointerSize": len(pointer)}
            entries.append(entry)
        return entries


def closed_endpoint() -> str:
    """An address on this machine where nothing listens (the port was free a moment ago)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class HubStandIn:
    """The stand-in server, in a background thread: `with HubStandIn() as hub: ... hub.url`."""

    def __init__(
        self,
        source: Path | None = None,
        *,
        mode: str = "normal",
        port: int = 0,
        repos: dict[str, Path] | None = None,
    ):
        self.repos = {repo_id: ServedRepo(folder) for repo_id, folder in (repos or {}).items()}
        source = source or bundled_model_dir()
        if source is None:
            raise RuntimeError("the stand-in Hub serves the bundled model's package files; install it")
        self.files = {name: (Path(source) / name).read_bytes() for name in BUNDLED_FILES}
        self.etags = {
            name: hashlib.sha256(data).hexdigest() if name in LFS_FILES else git_blob_sha1(data)
            for name, data in self.files.items()
        }
        damaged = bytearray(self.files["model.safetensors"])
        damaged[len(damaged) // 2] ^= 0x01  # inside a tensor: the file still parses
        self.corrupted = bytes(damaged)
        self.mode = mode
        self.requests: list[tuple[str, str]] = []  # (method, path), in order
        self._dropped_once = False
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread: threading.Thread | None = None

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        self.mode, self._dropped_once = mode, False

    def downloads(self, name: str) -> int:
        """How many GET requests asked for `name`."""
        return sum(1 for method, path in self.requests if method == "GET" and path.endswith("/" + name))

    def start(self) -> HubStandIn:
        self._thread = threading.Thread(target=self._server.serve_forever, name="hub-standin", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> HubStandIn:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _handler(hub: HubStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the Hub

        def log_message(self, *args) -> None:  # quiet: tests read hub.requests instead
            pass

        def do_HEAD(self) -> None:
            self._resolve(body=False)

        def do_GET(self) -> None:
            if api := _API.match(self.path):
                hub.requests.append((self.command, self.path))
                return self._api(api["repo"], api["what"], api["rev"])
            return self._resolve(body=True)

        def _json(self, value: object) -> None:
            data = json.dumps(value).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _api(self, repo_id: str, what: str, revision: str) -> None:
            repo = hub.repos.get(repo_id)
            if repo is None:
                return self._error(401, "RepoNotFound")
            if revision not in (repo.commit, "main"):
                return self._error(404, "RevisionNotFound")
            if what == "revision":
                siblings = [{"rfilename": name} for name in repo.paths]
                return self._json({"id": repo_id, "sha": repo.commit, "private": False, "siblings": siblings})
            return self._json(repo.tree())

        def _serve_file(self, repo: ServedRepo, revision: str, name: str, body: bool) -> None:
            """A file of one more repository, from disk, whole or a Range of it."""
            if revision not in (repo.commit, "main"):
                return self._error(404, "RevisionNotFound")
            if name not in repo.paths:
                return self._error(404, "EntryNotFound")
            size = repo.sizes[name]
            ranged = _RANGE.match(self.headers.get("Range", ""))
            start, end = (int(ranged[1]), int(ranged[2]) + 1 if ranged[2] else size) if ranged else (0, size)
            self.send_response(206 if ranged else 200)
            self.send_header("X-Repo-Commit", repo.commit)
            self.send_header("ETag", f'"{repo.etags[name]}"')
            if name.endswith(".safetensors"):
                self.send_header("X-Linked-Etag", f'"{repo.etags[name]}"')
                self.send_header("X-Linked-Size", str(size))
            if ranged:
                self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(end - start))
            self.end_headers()
            if body:
                with open(repo.paths[name], "rb") as f:
                    f.seek(start)
                    left = end - start
                    while left > 0 and (block := f.read(min(left, 1 << 20))):
                        self.wfile.write(block)
                        left -= len(block)
            return None

        def _error(self, status: int, code: str | None) -> None:
            message = f'{{"error": "{code or "not served by the stand-in"}"}}'.encode()
            self.send_response(status)
            if code:
                self.send_header("X-Error-Code", code)
                self.send_header("X-Repo-Commit", BUNDLED_REVISION)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(message)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(message)

        def _resolve(self, body: bool) -> None:
            hub.requests.append((self.command, self.path))
            match = _RESOLVE.match(self.path)
            if not match:  # the Hub's other APIs (huggingface_hub asks /api/... for a few things)
                return self._error(404, None)
            if match["repo"] in hub.repos:
                return self._serve_file(hub.repos[match["repo"]], match["rev"], match["name"], body)
            if match["repo"] != BUNDLED_HUB_ID:
                return self._error(401, "RepoNotFound")
            if match["rev"] not in (BUNDLED_REVISION, "main"):
                return self._error(404, "RevisionNotFound")
            name = match["name"]
            if name not in hub.files:
                return self._error(404, "EntryNotFound")
            weights = name == "model.safetensors"
            if body and weights and hub.mode == "drop" and hub._dropped_once:
                return self._cut()  # the network is gone: no answer at all
            data = hub.corrupted if weights and hub.mode == "corrupt" else hub.files[name]
            start, end = 0, len(data)
            ranged = _RANGE.match(self.headers.get("Range", ""))
            if ranged:
                start = int(ranged[1])
                end = int(ranged[2]) + 1 if ranged[2] else len(data)
            self.send_response(206 if ranged else 200)
            self.send_header("X-Repo-Commit", BUNDLED_REVISION)
            self.send_header("ETag", f'"{hub.etags[name]}"')
            if name in LFS_FILES:
                self.send_header("X-Linked-Etag", f'"{hub.etags[name]}"')
                self.send_header("X-Linked-Size", str(len(data)))
            if ranged:
                self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(end - start))
            self.end_headers()
            if not body:
                return None
            if weights and hub.mode == "drop":
                hub._dropped_once = True
                self.wfile.write(data[start : start + (end - start) // 2])
                self.wfile.flush()
                time.sleep(0.05)
                return self._cut()
            self.wfile.write(data[start:end])
            return None

        def _cut(self) -> None:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--mode", choices=MODES, default="normal")
    args = parser.parse_args()
    with HubStandIn(mode=args.mode, port=args.port) as hub:
        print(f"HF_ENDPOINT={hub.url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
