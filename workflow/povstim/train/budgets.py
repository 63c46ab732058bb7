"""Word budgets of ``training.checkpoint_words``: which checkpoints a run saves by words seen, and their names.

A budget is a number of words of the training text (whitespace-separated words of its lines) that the run has
consumed, repeats counted (BabyLM's rule: a second epoch over 10M words is 20M words seen). The checkpoint of a
budget is saved after the first step whose words seen reach it and is named by the budget, as BabyLM names its
intermediate checkpoints: ``checkpoints/chck_1M``, ``chck_10M``. How words map to steps is
``train/data.py``'s ``item_words`` and ``words_by_step`` (docs/training.md, "Checkpoints on a word budget").

Pure Python: ``povstim.config.validate`` checks the key through :func:`budgets` at every DAG build.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ..io import PovstimError, parse_size

PREFIX = "chck_"


def label(words: int) -> str:
    """1000000 -> '1M', 140000 -> '140k', 1500000 -> '1.5M', 500 -> '500' (the shortest exact form)."""
    for unit, mult in (("M", 1_000_000), ("k", 1_000)):
        if words >= mult:
            value = words / mult
            text = f"{value:.6f}".rstrip("0").rstrip(".")
            if float(text) * mult == words:
                return f"{text}{unit}"
    return str(int(words))


def round_sig(x: float, digits: int = 2) -> int:
    """``x`` rounded to ``digits`` significant digits (19306.98 -> 19000)."""
    if x <= 0:
        return 0
    scale = 10 ** (math.floor(math.log10(x)) - digits + 1)
    return int(round(x / scale) * scale)


def budgets(spec, where: str = "training.checkpoint_words") -> list[tuple[str, int]]:
    """(label, words) of each budget of a ``checkpoint_words`` value, ascending; [] for null. Errors name ``where``."""
    if spec is None:
        return []
    if isinstance(spec, Mapping):  # (a settings object holds it frozen: a mapping proxy, a tuple)
        missing = [k for k in ("from", "to", "n") if k not in spec]
        if missing:
            raise PovstimError(f"{where}: a log-spaced budget needs from, to and n (missing {', '.join(missing)})")
        lo, hi, n = _words(spec["from"], f"{where}.from"), _words(spec["to"], f"{where}.to"), spec["n"]
        if not isinstance(n, int) or isinstance(n, bool) or n < 2:
            raise PovstimError(f"{where}.n must be an integer >= 2, not {n!r}")
        if hi <= lo:
            raise PovstimError(f"{where}: 'to' ({label(hi)}) must be larger than 'from' ({label(lo)})")
        step = (math.log10(hi) - math.log10(lo)) / (n - 1)
        values = [round_sig(10 ** (math.log10(lo) + k * step)) for k in range(n)]
        values[0], values[-1] = lo, hi  # the ends as written
        if len(set(values)) != len(values):
            raise PovstimError(f"{where}: {n} budgets from {label(lo)} to {label(hi)} repeat once rounded to 2 "
                               "significant digits; use fewer budgets or a wider range")
    elif isinstance(spec, (list, tuple)):
        if not spec:
            raise PovstimError(f"{where}: give at least one budget (or null for none)")
        values = [_words(v, f"{where}[{i}]") for i, v in enumerate(spec)]
        for i in range(1, len(values)):
            if values[i] <= values[i - 1]:
                raise PovstimError(f"{where}: budgets must increase ({where}[{i}] = {spec[i]} follows "
                                   f"{spec[i - 1]})")
    else:
        raise PovstimError(f"{where} must be a list of word budgets ([1M, 10M]), {{from, to, n}} or null, "
                           f"not {spec!r}")
    out = [(label(v), v) for v in values]
    names = [name for name, _ in out]
    if len(set(names)) != len(names):
        raise PovstimError(f"{where}: two budgets share the name {PREFIX}{names[0]}")
    return out


def _words(value, where: str) -> int:
    if isinstance(value, bool):
        raise PovstimError(f"{where}: {value!r} is not a word count")
    try:
        words = parse_size(value)
    except PovstimError:
        raise PovstimError(f"{where}: cannot read {value!r} as a word count (like 300k, 10M or 5000)") from None
    if words < 1:
        raise PovstimError(f"{where}: a budget must be at least 1 word, not {value!r}")
    return words
