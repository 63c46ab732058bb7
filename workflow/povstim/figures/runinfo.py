"""The run's config and package versions as one HTML page for the Snakemake report."""

from __future__ import annotations

import html
import platform
import sys
from importlib import metadata

import yaml

from ..io import atomic_write

PACKAGES = [
    "povstim", "snakemake", "torch", "transformers", "tokenizers", "stanza", "spacy", "minicons",
    "numpy", "pandas", "pyarrow", "scipy", "bambi", "pymc", "pytensor", "arviz", "formulae",
    "matplotlib", "jsonschema", "pyyaml",
]


def package_versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0]}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def write_run_info(path, config: dict) -> None:
    versions = package_versions()
    rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in versions.items())
    cfg = yaml.safe_dump(config, sort_keys=False, default_flow_style=False, width=10**6)
    page = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><style>body{font-family:sans-serif;font-size:13px}"
        "td{border:1px solid #999;padding:2px 8px}pre{background:#f4f4f4;padding:8px}</style></head><body>"
        f"<h3>Experiment {html.escape(str(config.get('experiment', '')))}</h3>"
        f"<p>Platform: {html.escape(platform.platform())}</p>"
        f"<h4>Package versions</h4><table>{rows}</table>"
        f"<h4>Config</h4><pre>{html.escape(cfg)}</pre></body></html>\n"
    )
    with atomic_write(path) as fh:
        fh.write(page)
