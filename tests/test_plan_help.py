"""`povstim plan --help` says what plan reports, beyond words and sizes: the evidence estimate
(the filter's removals, BABY's targeted pool, reinsertion/dose shortfalls), thin word-pool warnings and the
casing check."""

from __future__ import annotations

import re

from povstim import cli


def _help(capsys, *argv) -> str:
    try:
        cli.main([*argv, "--help"])
    except SystemExit as exc:
        assert exc.code == 0
    return re.sub(r"\s+", " ", capsys.readouterr().out)  # argparse wraps lines


def test_plan_help_names_everything_plan_reports(capsys):
    text = _help(capsys, "plan")
    for words in ("filter's removals", "targeted pool", "reinsertion/dose shortfalls", "thin-pool warnings",
                  "casing check",  # the one-line summary
                  "what the DPE filter removes", "dose of a dose series", "thin word pool",
                  "the casing check", "--filter-sample"):  # the description below the options
        assert words in text, words


def test_the_stage_list_summary_names_them_too(capsys):
    text = _help(capsys)
    plan_line = text[text.index(" plan "):text.index(" report ")]
    for words in ("targeted pool", "shortfalls", "thin-pool", "casing"):
        assert words in plan_line, words
