"""``povstim download``: fetch a real source's files into resources/downloads/{source}/."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..io import PovstimError
from . import REMOTE_KINDS
from .download import download_source
from .spec import source_spec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Download the files of one source (kinds: " + ", ".join(REMOTE_KINDS) + ") into OUT_DIR: streamed, "
        "resumed with HTTP Range after a cut, sha256-verified when the config gives a checksum, and only "
        "renamed into place when complete. Writes OUT_DIR/manifest.json (name, url, bytes, sha256 per file) last."
    )
    parser.add_argument("--source", required=True, help="source name (the key under `sources:` in the config)")
    parser.add_argument(
        "--params",
        required=True,
        help="the source's config as JSON, e.g. '{\"kind\": \"text_url\", \"url\": \"https://.../a.txt.gz\", "
        "\"sha256\": \"...\"}' (keys: url, sha256, filename, files: [{url, sha256, name}], retries, timeout)",
    )
    parser.add_argument("--out-dir", required=True, type=Path, help="folder for the files, e.g. resources/downloads/NAME")


def run(args: argparse.Namespace) -> int:
    spec = source_spec(args.source, args.params)
    if spec.get("kind") not in REMOTE_KINDS:
        raise PovstimError(
            f"source '{args.source}' has kind '{spec.get('kind')}': only {', '.join(REMOTE_KINDS)} are downloaded"
            " (local sources are read in place by `povstim clean`)"
        )
    download_source(args.source, spec, args.out_dir)
    return 0
