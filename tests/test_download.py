"""`povstim download` against a real HTTP server on 127.0.0.1 (no mocks of the HTTP layer)."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import json
import subprocess
import sys
import threading
import time

import pytest

from povstim.io import PovstimError
from povstim.sources import download as _download
from povstim.sources.download import remote_files


def download_source(*args, **kw):
    """The real download, with a short retry back-off so the failure tests stay fast."""
    return _download.download_source(*args, backoff=0.01, **kw)

# Big enough for several 1 MiB reads, small enough to be instant.
PAYLOAD = b"".join(b"line %06d: the dog that is barking is happy.\n" % i for i in range(60000))
SHA = hashlib.sha256(PAYLOAD).hexdigest()
GZ = gzip.compress(b"Is the boy who is smiling happy?\nThe girl saw herself.\n", mtime=0)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log: list = []  # (path, Range header) per request, shared with the tests
    cut_once: set = set()

    def log_message(self, *args):  # keep pytest output clean
        pass

    def _send(self, body: bytes, honour_range: bool = True, cut_at: int | None = None):
        start = 0
        rng = self.headers.get("Range")
        if rng and honour_range:
            start = int(rng.split("=")[1].split("-")[0])
            if start >= len(body):
                self.send_response(416)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(body) - start))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        data = body[start:]
        if cut_at is not None:
            self.wfile.write(data[:cut_at])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)  # the connection drops mid-transfer
            return
        self.wfile.write(data)

    def do_GET(self):
        Handler.log.append((self.path, self.headers.get("Range")))
        if self.path == "/good.txt":
            self._send(PAYLOAD)
        elif self.path == "/corpus.txt.gz":
            self._send(GZ)
        elif self.path == "/corrupt.txt":
            self._send(PAYLOAD[:-10] + b"CORRUPTED\n")
        elif self.path == "/cut.txt":
            # The first transfer dies after ~1.2 MB; later (Range) requests succeed.
            if "/cut.txt" not in Handler.cut_once:
                Handler.cut_once.add("/cut.txt")
                self._send(PAYLOAD, cut_at=1_200_000)
            else:
                self._send(PAYLOAD)
        elif self.path == "/always-cut.txt":
            self._send(PAYLOAD, cut_at=1000 if not self.headers.get("Range") else 10)
        elif self.path == "/norange.txt":
            self._send(PAYLOAD, honour_range=False)
        elif self.path == "/slow.txt":
            time.sleep(3)
            self._send(PAYLOAD)
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()


@pytest.fixture()
def server():
    Handler.log = []
    Handler.cut_once = set()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _spec(url, sha=None, **kw):
    spec = {"kind": "text_url", "url": url, "retries": 2, "timeout": 2, **kw}
    if sha:
        spec["sha256"] = sha
    return spec


def _leftovers(out):
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())


def test_success_writes_file_and_manifest(server, tmp_path):
    out = tmp_path / "dl"
    manifest = download_source("gut", _spec(f"{server}/good.txt", SHA, license="public domain"), out)
    assert (out / "good.txt").read_bytes() == PAYLOAD
    on_disk = json.loads((out / "manifest.json").read_text())
    assert on_disk == manifest
    assert on_disk["files"] == [{"name": "good.txt", "url": f"{server}/good.txt", "bytes": len(PAYLOAD), "sha256": SHA}]
    assert on_disk["license"] == "public domain"
    assert _leftovers(out) == ["good.txt", "manifest.json"]


def test_cached_file_is_not_downloaded_again(server, tmp_path):
    out = tmp_path / "dl"
    download_source("gut", _spec(f"{server}/good.txt", SHA), out)
    n = len(Handler.log)
    download_source("gut", _spec(f"{server}/good.txt", SHA), out)
    assert len(Handler.log) == n


def test_resume_after_connection_cut(server, tmp_path):
    out = tmp_path / "dl"
    download_source("cut", _spec(f"{server}/cut.txt", SHA), out)
    assert (out / "cut.txt").read_bytes() == PAYLOAD
    requests = [r for r in Handler.log if r[0] == "/cut.txt"]
    assert requests[0] == ("/cut.txt", None)
    # The retry asked only for the missing bytes.
    assert len(requests) == 2 and requests[1][1].startswith("bytes=")
    resumed_at = int(requests[1][1].split("=")[1].rstrip("-"))
    assert 0 < resumed_at <= 1_200_000
    assert _leftovers(out) == ["cut.txt", "manifest.json"]


def test_resume_of_a_part_left_by_an_earlier_run(server, tmp_path):
    out = tmp_path / "dl"
    part = out / ".partial" / "good.txt.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(PAYLOAD[:5000])
    download_source("gut", _spec(f"{server}/good.txt", SHA), out)
    assert Handler.log == [("/good.txt", "bytes=5000-")]
    assert (out / "good.txt").read_bytes() == PAYLOAD
    assert not part.exists()


def test_server_ignoring_range_restarts_cleanly(server, tmp_path):
    out = tmp_path / "dl"
    part = out / ".partial" / "norange.txt.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(PAYLOAD[:5000])
    download_source("nr", _spec(f"{server}/norange.txt", SHA), out)
    assert (out / "norange.txt").read_bytes() == PAYLOAD


def test_404_names_source_and_url_and_leaves_nothing(server, tmp_path):
    out = tmp_path / "dl"
    with pytest.raises(PovstimError) as err:
        download_source("childes", _spec(f"{server}/missing.zip"), out)
    msg = str(err.value)
    assert "childes" in msg and f"{server}/missing.zip" in msg and "404" in msg
    assert _leftovers(out) == []


def test_checksum_mismatch_is_an_error_and_leaves_nothing(server, tmp_path):
    out = tmp_path / "dl"
    with pytest.raises(PovstimError) as err:
        download_source("bnc", _spec(f"{server}/corrupt.txt", SHA), out)
    msg = str(err.value)
    assert "checksum mismatch" in msg and "bnc" in msg and f"{server}/corrupt.txt" in msg and SHA in msg
    assert _leftovers(out) == []


def test_truncation_after_retries_names_url_and_keeps_only_resume_file(server, tmp_path):
    out = tmp_path / "dl"
    with pytest.raises(PovstimError) as err:
        download_source("subs", _spec(f"{server}/always-cut.txt", SHA), out)
    msg = str(err.value)
    assert "subs" in msg and f"{server}/always-cut.txt" in msg and "3 attempts" in msg
    # No file under its final name and no manifest: only the hidden resume file.
    assert _leftovers(out) == [".partial/always-cut.txt.part"]
    assert 1000 <= (out / ".partial" / "always-cut.txt.part").stat().st_size < len(PAYLOAD)


def test_timeout_is_an_error_naming_url(server, tmp_path):
    out = tmp_path / "dl"
    with pytest.raises(PovstimError) as err:
        download_source("slow", _spec(f"{server}/slow.txt", timeout=0.5, retries=0), out)
    assert f"{server}/slow.txt" in str(err.value) and "slow" in str(err.value)
    assert not (out / "slow.txt").exists() and not (out / "manifest.json").exists()


def test_files_list_and_duplicate_names(server, tmp_path):
    spec = {"kind": "hf_parquet", "files": [{"url": f"{server}/good.txt", "name": "a.txt"}, f"{server}/corpus.txt.gz"]}
    assert [f.name for f in remote_files("x", spec)] == ["a.txt", "corpus.txt.gz"]
    with pytest.raises(PovstimError, match="distinct"):
        remote_files("x", {"kind": "text_url", "files": [f"{server}/a/x.txt", f"{server}/b/x.txt"]})
    with pytest.raises(PovstimError, match="needs `url` or `files`"):
        remote_files("x", {"kind": "text_url"})


def test_cli_downloads_then_cleans(server, tmp_path):
    """The two subcommands as the rules call them: download a .gz, clean it."""
    out = tmp_path / "dl"
    spec = json.dumps({"kind": "text_url", "format": "lines", "url": f"{server}/corpus.txt.gz"})
    r = subprocess.run(
        [sys.executable, "-m", "povstim", "download", "--source", "tiny", "--params", spec, "--out-dir", str(out)],
        capture_output=True, text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "tiny/corpus.txt.gz: 100.0% " in r.stderr  # the progress line (one per 10% in a log)
    r = subprocess.run(
        [sys.executable, "-m", "povstim", "clean", "--source", "tiny", "--params", spec, "--input-dir", str(out),
         "--out", str(tmp_path / "tiny.txt"), "--stats", str(tmp_path / "tiny.stats.json")],
        capture_output=True, text=True,
    )
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "tiny.txt").read_text() == "Is the boy who is smiling happy?\nThe girl saw herself.\n"
    stats = json.loads((tmp_path / "tiny.stats.json").read_text())
    assert stats["lines_out"] == 2 and stats["question_share"] == 0.5


def test_cli_404_is_a_clean_error(server, tmp_path):
    spec = json.dumps({"kind": "text_url", "url": f"{server}/nope.txt", "retries": 0})
    r = subprocess.run(
        [sys.executable, "-m", "povstim", "download", "--source", "nope", "--params", spec, "--out-dir", str(tmp_path)],
        capture_output=True, text=True,
    )
    assert r.returncode == 1
    assert "Traceback" not in r.stderr and f"{server}/nope.txt" in r.stderr and "HTTP 404" in r.stderr
