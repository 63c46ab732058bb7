"""scripts/gpu_wheels.py: the wheels a GPU machine without internet needs (for the GPU device runs). The closure is
read from this environment's real metadata, downloads go over real HTTP to an index on 127.0.0.1, and slimmed
wheels are installed by real pip."""

from __future__ import annotations

import base64
import functools
import hashlib
import http.server
import os
import subprocess
import sys
import threading
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import gpu_wheels as gw  # noqa: E402


def test_closure_reads_this_environments_metadata_for_the_targets_python():
    found = gw.closure("povstim", gw.target_env("3.12"))
    # povstim's own pins, at the versions installed here, marked pinned; a transitive one is not
    assert found["transformers"][:3] == ("transformers", metadata.version("transformers"), True)
    assert found["pandas"][1:3] == (metadata.version("pandas"), True)
    assert found["snakemake-interface-common"].pinned is False  # snakemake's, not povstim's
    # what the closure's requirements ask of a package: povstim pins transformers exactly
    assert f"=={metadata.version('transformers')}" in found["transformers"].wants
    # the checkout travels, and the test extra is not asked for
    assert "povstim" not in found and "pytest" not in found and "minicons" not in found
    with_peer = gw.closure("povstim", gw.target_env("3.12"), ["minicons"])
    assert with_peer["minicons"].pinned is True and set(found) < set(with_peer)
    with pytest.raises(SystemExit, match="--python-version"):
        gw.target_env("3.12.1")


def test_closure_follows_extras_asked_for_later_and_markers(tmp_path, monkeypatch):
    """Hand-made installed packages: root needs a and b; b needs a[x]; a's extra x needs c; d is for Python < 3.12
    only; e is an extra of root nobody asks for; below 3.10, two packages nobody installed."""
    def dist(name, version, *requires):
        info = tmp_path / f"{name}-{version}.dist-info"
        info.mkdir()
        info.joinpath("METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                             + "".join(f"Requires-Dist: {r}\n" for r in requires))

    dist("rootpkg", "1.0", "bpkg>=2", "apkg==1.0", "dpkg; python_version < '3.12'", "epkg; extra == 'dev'",
         "nosuchpkg-one; python_version < '3.10'", "nosuchpkg-two; python_version < '3.10'")
    dist("apkg", "1.0", "cpkg<4; extra == 'x'")
    dist("bpkg", "2.5", "apkg[x]>=0.5")
    for name in ("cpkg", "dpkg", "epkg"):
        dist(name, "3.0")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = gw.closure("rootpkg", gw.target_env("3.12"))
    assert found == {"apkg": gw.Pkg("apkg", "1.0", True, ("==1.0", ">=0.5")), "bpkg": gw.Pkg("bpkg", "2.5", True, (">=2",)),
                     "cpkg": gw.Pkg("cpkg", "3.0", False, ("<4",))}
    assert set(gw.closure("rootpkg", gw.target_env("3.11"))) == {"apkg", "bpkg", "cpkg", "dpkg"}
    assert set(gw.closure("rootpkg[dev]", gw.target_env("3.12"))) == {"apkg", "bpkg", "cpkg", "epkg"}
    # the versions to carry are the ones installed here: every package the target needs and this Python lacks is named
    with pytest.raises(SystemExit, match="required on the target but not installed here: nosuchpkg-one, nosuchpkg-two"):
        gw.closure("rootpkg", gw.target_env("3.9"))


def test_what_is_carried(tmp_path):
    P = gw.Pkg
    found = {"transformers": P("transformers", "5.24.0", True), "pandas": P("pandas", "3.1.1", True),
             "torch": P("torch", "2.13.0", True), "filelock": P("filelock", "4.3.1", False, (">=3.0",)),
             "idna": P("idna", "3.20", False), "wonderwords": P("wonderwords", "3.0.1", False),
             "nvidia-cublas": P("nvidia-cublas", "13.0", False), "yte": P("yte", "1.9.4", False),
             "huggingface-hub": P("huggingface_hub", "2.4.0", False, ("<3,>=1.5", ">=1.0")),
             "regex": P("regex", "2026.11.19", False, ("!=2019.12.17",))}
    have_txt = tmp_path / "have.txt"
    have_txt.write_text("# pip list --format=freeze\ntransformers==5.17.0\npandas\nTorch==2.11.0+cu130\n"
                        "filelock\nidna==3.20\nnvidia_cublas==13.1\nyte @ file:///wheels/yte-1.9.4-py3-none-any.whl\n"
                        "huggingface_hub==1.3.0\nregex==2024.5.15\n")
    have = gw.read_have(have_txt)
    assert have == {"transformers": "5.17.0", "pandas": None, "torch": "2.11.0+cu130", "filelock": None,
                    "idna": "3.20", "nvidia-cublas": "13.1", "yte": None, "huggingface-hub": "1.3.0",
                    "regex": "2024.5.15"}
    # by hand: huggingface_hub (transitive, but 1.3.0 is below what a requirement asks), pandas (pinned, version
    # unknown), transformers (pinned, other version), wonderwords (missing); torch and nvidia-* are the image's own
    # builds; filelock and yte are transitive at a version nobody can check; regex's 2024.5.15 is allowed; idna same
    assert gw.choose(found, have) == [("huggingface_hub", "2.4.0", "the target has 1.3.0; required: <3,>=1.5"),
                                      ("pandas", "3.1.1", "pinned; the target's version is unknown"),
                                      ("transformers", "5.24.0", "pinned; the target has 5.17.0"),
                                      ("wonderwords", "3.0.1", "missing")]
    # trusting nothing, pinned torch is carried; transitive nvidia-cublas at 13.1 is not (no requirement refuses it)
    assert [n for n, _, _ in gw.choose(found, have, trust=())] == ["huggingface_hub", "pandas", "torch",
                                                                   "transformers", "wonderwords"]
    # a local build (this machine's CPU torch) is never fetched: no index has it, and the target needs its own
    fetch, yours = gw.local_builds([("torch", "2.13.0+cpu", "missing"), ("pandas", "3.1.1", "missing")])
    assert fetch == [("pandas", "3.1.1", "missing")] and yours == [("torch", "2.13.0+cpu", "missing")]
    # `pip list`'s own table reads the same
    table = tmp_path / "list.txt"
    table.write_text("Package    Version\n---------- -------\nidna       3.20\ntransformers 5.17.0\n")
    assert gw.read_have(table) == {"idna": "3.20", "transformers": "5.17.0"}
    bad = tmp_path / "bad.txt"
    bad.write_text("idna==3.20\n!!!\n")
    with pytest.raises(SystemExit, match=r"bad.txt:2: not a package line"):
        gw.read_have(bad)


def _wheel(folder: Path, name: str, version: str, files: dict[str, str]) -> Path:
    """A real wheel (METADATA, WHEEL, RECORD with sha256 entries) holding ``files``."""
    dist = f"{name}-{version}.dist-info"
    files = {**files, f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
             f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    for path, text in files.items():
        digest = hashlib.sha256(text.encode()).digest()
        record.append(f"{path},sha256={base64.urlsafe_b64encode(digest).rstrip(b'=').decode()},{len(text)}")
    record.append(f"{dist}/RECORD,,")
    out = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for path, text in files.items():
            z.writestr(path, text)
        z.writestr(f"{dist}/RECORD", "\n".join(record) + "\n")
    return out


def _pip_env():
    # this machine's pip configuration (extra indexes, find-links) stays out of the tests
    return {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def test_slimmed_wheels_install_with_pip_without_the_dropped_files(tmp_path):
    body = "x = 1\n" * 2000  # something to compress, so the wheel shrinks measurably
    w = _wheel(tmp_path, "transformers", "9.0.0", {
        "transformers/__init__.py": "", "transformers/models/gpt2/modeling_gpt2.py": body,
        "transformers/models/bloom/modeling_bloom.py": body, "transformers/models/t5/modeling_t5.py": body,
        "transformers/modeling_utils.py": body})
    saved = gw.slim(w, gw.other_models(("gpt2", "bloom")))
    assert saved > 0
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--target",
                           str(tmp_path / "site"), str(w)], capture_output=True, text=True, env=_pip_env())
    assert proc.returncode == 0, proc.stderr
    site = tmp_path / "site" / "transformers"
    assert (site / "models/gpt2/modeling_gpt2.py").is_file() and (site / "models/bloom/modeling_bloom.py").is_file()
    assert not (site / "models/t5").exists() and (site / "modeling_utils.py").is_file()
    record = (tmp_path / "site" / "transformers-9.0.0.dist-info" / "RECORD").read_text()
    assert "models/t5" not in record and "models/gpt2/modeling_gpt2.py" in record
    # PuLP: only the target's (Linux x86-64) CBC binaries are kept
    assert gw.other_platforms_solvers("pulp/solverdir/cbc/osx/i64/cbc")
    assert gw.other_platforms_solvers("pulp/solverdir/cbc/linux/arm64/cbc")
    assert not gw.other_platforms_solvers("pulp/solverdir/cbc/linux/i64/cbc")
    assert not gw.other_platforms_solvers("pulp/pulp.py")


class _Index(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_download_fetches_exact_versions_from_an_index_and_names_what_it_cannot_get(tmp_path):
    # a PEP 503 simple index on 127.0.0.1: /simple/<name>/ lists the files, which are served from /files/
    files = tmp_path / "www" / "files"
    files.mkdir(parents=True)
    _wheel(files, "fakepkg", "1.0", {"fakepkg/__init__.py": "v = 1\n"})
    _wheel(files, "fakepkg", "2.0", {"fakepkg/__init__.py": "v = 2\n"})
    page = tmp_path / "www" / "simple" / "fakepkg"
    page.mkdir(parents=True)
    page.joinpath("index.html").write_text("".join(f'<a href="../../files/{w.name}">{w.name}</a>\n'
                                                    for w in sorted(files.glob("*.whl"))))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Index, directory=str(tmp_path / "www")))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    index = f"http://127.0.0.1:{httpd.server_address[1]}/simple/"
    old = dict(os.environ)
    os.environ.update(_pip_env())
    try:
        out = tmp_path / "whl"
        assert gw.download([("fakepkg", "1.0", "missing")], out, "3.12", index) == []
        assert [w.name for w in out.glob("*.whl")] == ["fakepkg-1.0-py3-none-any.whl"]
        # a package the index does not have: pip download finds no wheel, pip wheel finds no source either
        with pytest.raises(SystemExit, match="nopkg==0.1 has no wheel for the target and building one failed"):
            gw.download([("fakepkg", "1.0", "missing"), ("nopkg", "0.1", "missing")], out, "3.12", index)
    finally:
        os.environ.clear()
        os.environ.update(old)
        httpd.shutdown()
        httpd.server_close()
