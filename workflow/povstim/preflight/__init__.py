"""Before and around a run: checking a config (``povstim check``), planning what it will use
(``povstim plan``), building its report (``povstim report``) and the Snakefile's run-time guards
(a report built for the wrong experiment, a stale lock, what to say when a run ends)."""

import argparse


def config_command(p: argparse.ArgumentParser, doc: str) -> None:
    """The set-up every ``povstim <command> CONFIG`` of this package shares: the module docstring's
    examples as the epilog (kept as written) and the one positional CONFIG."""
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = doc.split("\n\n", 1)[1]
    p.add_argument("config", metavar="CONFIG", help="config file (YAML)")
