"""Shuffled k-Dyck sequences for formal-language pre-pretraining (Hu et al. 2025; POSH §7).

A k-Dyck word has k bracket types; in the *shuffled* variant (k-Shuffle Dyck) a
closing bracket may close any currently open bracket of its type, not only the
most recent one, so dependencies cross instead of nesting. Hu et al. found this
language, pre-pretrained on for a few thousand steps, to transfer best to
natural language.

The generator follows Hu et al.'s procedure: with no bracket open, open one of
the k types uniformly; at the maximal depth, close; otherwise open with
probability ``p_open`` and close with ``1 - p_open``. Opening draws a type
uniformly from the k types; closing draws uniformly from the *types* that have
an open bracket (not from the open brackets themselves). Symbols follow their
convention: type ``i`` opens as ``i`` and closes as ``i + k``.

Hu et al. cut each sequence at a fixed length, so a sequence usually ends with
brackets still open ("the final Dyck word may be invalid due to truncation").
``complete=True`` is a named option that instead closes everything in time, so
every sequence is a balanced shuffled-Dyck word of exactly ``length`` symbols.

Determinism: one ``random.Random`` per (seed, split); the same settings and
seed give the same corpus byte for byte on any platform.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterator

from ..io import PovstimError

SPLITS = {"train": 0, "dev": 1}


@dataclass(frozen=True)
class DyckSpec:
    k: int = 64
    length: int = 32
    p_open: float = 0.5
    max_depth: int = 8
    complete: bool = False

    def check(self, where: str = "dyck") -> "DyckSpec":
        if not isinstance(self.k, int) or self.k < 1:
            raise PovstimError(f"{where}.k must be an integer >= 1 (bracket types), got {self.k!r}")
        if not isinstance(self.length, int) or self.length < 2:
            raise PovstimError(f"{where}.length must be an integer >= 2, got {self.length!r}")
        if not 0 < float(self.p_open) < 1:
            raise PovstimError(f"{where}.p_open must be in (0, 1), got {self.p_open!r}")
        if not isinstance(self.max_depth, int) or self.max_depth < 1:
            raise PovstimError(f"{where}.max_depth must be an integer >= 1, got {self.max_depth!r}")
        if self.complete and self.length % 2:
            raise PovstimError(
                f"{where}.complete needs an even length (every bracket opened is closed), got length {self.length}"
            )
        return self


def shuffled_dyck(rng: random.Random, spec: DyckSpec) -> list[int]:
    """One sequence of ``spec.length`` symbols (see the module docstring for the procedure)."""
    k, length, p_open, max_depth, complete = spec.k, spec.length, float(spec.p_open), spec.max_depth, spec.complete
    counts = [0] * k
    open_types: list[int] = []  # types with at least one open bracket, in the order they were opened
    depth = 0
    seq: list[int] = []
    while len(seq) < length:
        remaining = length - len(seq)
        # complete: an opening bracket needs room for itself and for closing everything after it
        can_open = depth < max_depth and (not complete or depth + 2 <= remaining)
        if depth == 0 or (can_open and rng.random() < p_open):
            t = rng.randrange(k)
            seq.append(t)
            if counts[t] == 0:
                open_types.append(t)
            counts[t] += 1
            depth += 1
        else:
            t = open_types[rng.randrange(len(open_types))]
            seq.append(t + k)
            counts[t] -= 1
            if counts[t] == 0:
                open_types.remove(t)
            depth -= 1
    return seq


def _rng(seed: int, split: str) -> random.Random:
    if split not in SPLITS:
        raise PovstimError(f"unknown Dyck split {split!r} (train or dev)")
    # an int seed is hashed the same way on every platform and Python version
    return random.Random(int(seed) * len(SPLITS) + SPLITS[split])


def generate(spec: DyckSpec, n: int, seed: int, split: str = "train") -> Iterator[list[int]]:
    """``n`` sequences of the ``split`` stream (train and dev streams are independent)."""
    spec.check()
    if n < 1:
        raise PovstimError(f"number of Dyck sequences must be >= 1, got {n}")
    rng = _rng(seed, split)
    for _ in range(n):
        yield shuffled_dyck(rng, spec)


def to_line(seq: list[int]) -> str:
    """Hu et al.'s file format: space-separated symbols."""
    return " ".join(map(str, seq))


def read_sequences(path, k: int) -> list[list[int]]:
    """Read a Dyck file back, checking every symbol is one of the 2k brackets."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                seq = [int(x) for x in line.split()]
            except ValueError:
                raise PovstimError(f"{path}:{lineno}: not a line of integer bracket symbols") from None
            bad = [s for s in seq if not 0 <= s < 2 * k]
            if bad:
                raise PovstimError(f"{path}:{lineno}: symbol {bad[0]} is outside 0..{2 * k - 1} (k = {k})")
            out.append(seq)
    if not out:
        raise PovstimError(f"{path}: no Dyck sequences")
    return out
