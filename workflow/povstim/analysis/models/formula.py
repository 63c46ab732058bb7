"""A small parser for the right-hand side of a mixed-model formula.

We expand the formula ourselves instead of handing it to Bambi because we code every
predictor ourselves (z-scored numerics, sum-to-zero contrasts with the *last* level as the
implicit reference, as in POSH Table 12), drop terms a degenerate design cannot estimate, and
give the coefficients readable names (nutpie also crashes on formulae's ``C(x, Sum)`` names).

Supported: ``a + b``, ``a:b``, ``a*b`` (= a + b + a:b), parentheses, ``1``/``0``/``-1`` for the
intercept, and group-level terms ``(1|g)``, ``(x|g)``, ``(1 + x|g)``, ``(0 + x|g)``.
Precedence follows R: ``:`` binds tighter than ``*``, which binds tighter than ``+``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from povstim.io import PovstimError

Term = tuple[str, ...]  # variables of one fixed-effect term, in first-appearance order

_TOKEN = re.compile(r"\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_.]*)|(?P<num>\d+)|(?P<op>[-+*:()|]))")


@dataclass
class GroupTerm:
    group: str
    intercept: bool
    slopes: list[str] = field(default_factory=list)

    def label(self) -> str:
        parts = (["1"] if self.intercept else ["0"]) + self.slopes
        return f"({' + '.join(parts)}|{self.group})"


@dataclass
class Formula:
    text: str
    intercept: bool
    terms: list[Term]
    groups: list[GroupTerm]

    def variables(self) -> list[str]:
        seen: list[str] = []
        for t in self.terms:
            for v in t:
                if v not in seen:
                    seen.append(v)
        for g in self.groups:
            for v in g.slopes:
                if v not in seen:
                    seen.append(v)
        return seen


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise PovstimError(f"formula {text!r}: cannot read from position {pos}: {text[pos:]!r}")
        out.append(m.group("name") or m.group("num") or m.group("op"))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str):
        self.text = text
        if "~" in text:
            self.error("give only the right-hand side (the response is set by the input: "
                       "'correct' for items, n_correct/n_total for counts)")
        self.toks = _tokens(text)
        self.i = 0
        self.intercept = True
        self.groups: list[GroupTerm] = []

    def error(self, msg: str):
        raise PovstimError(f"formula {self.text!r}: {msg}")

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, tok=None):
        t = self.peek()
        if t is None or (tok is not None and t != tok):
            self.error(f"expected {tok or 'more'} but found {t or 'the end'}")
        self.i += 1
        return t

    def parse(self) -> Formula:
        terms = self.sum(top=True)
        if self.peek() is not None:
            self.error(f"unexpected {self.peek()!r}")
        return Formula(self.text, self.intercept, _dedupe(terms), self.groups)

    def sum(self, top=False) -> list[Term]:
        terms: list[Term] = []
        sign = "+"
        while True:
            if self.peek() == "-":
                self.take()
                sign = "-"
            if self.peek() in ("0", "1"):
                tok = self.take()
                if not top:
                    self.error("the intercept (0/1) may only appear at the top level")
                self.intercept = (tok == "1") != (sign == "-")
            else:
                if sign == "-":
                    self.error("only '- 1' (no intercept) may be subtracted")
                terms += self.product()
            if self.peek() == "+" or self.peek() == "-":
                sign = "+"
                if self.peek() == "+":
                    self.take()
                continue
            return terms

    def product(self) -> list[Term]:
        terms = self.interaction()
        while self.peek() == "*":
            self.take()
            right = self.interaction()
            terms = terms + right + [_join(a, b) for a in terms for b in right]
        return terms

    def interaction(self) -> list[Term]:
        terms = self.atom()
        while self.peek() == ":":
            self.take()
            right = self.atom()
            terms = [_join(a, b) for a in terms for b in right]
        return terms

    def atom(self) -> list[Term]:
        tok = self.peek()
        if tok == "(":
            # A group-level term is '(' ... '|' NAME ')'; look for a '|' at this depth.
            depth, j = 0, self.i
            while j < len(self.toks):
                if self.toks[j] == "(":
                    depth += 1
                elif self.toks[j] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                elif self.toks[j] == "|" and depth == 1:
                    return self.group_term()
                j += 1
            self.take("(")
            terms = self.sum()
            self.take(")")
            return terms
        if tok is None or not re.match(r"[A-Za-z_]", tok):
            self.error(f"expected a variable name, found {tok or 'the end'}")
        self.take()
        return [(tok,)]

    def group_term(self) -> list[Term]:
        if self.i > 0 and self.toks[self.i - 1] in ("*", ":"):
            self.error("a group-level term cannot be part of an interaction")
        self.take("(")
        intercept, slopes = True, []
        while self.peek() != "|":
            tok = self.take()
            if tok in ("+",):
                continue
            if tok == "0":
                intercept = False
            elif tok == "1":
                intercept = True
            elif tok == "-" and self.peek() == "1":
                self.take()
                intercept = False
            elif re.match(r"[A-Za-z_]", tok):
                slopes.append(tok)
            else:
                self.error(f"group-level terms may hold only 1, 0 and variable names, found {tok!r}")
        self.take("|")
        group = self.take()
        if not re.match(r"[A-Za-z_]", group):
            self.error(f"expected a grouping variable after '|', found {group!r}")
        self.take(")")
        if self.peek() in ("*", ":"):
            self.error("a group-level term cannot be part of an interaction")
        self.groups.append(GroupTerm(group, intercept, slopes))
        return []


def _join(a: Term, b: Term) -> Term:
    out = list(a)
    for v in b:
        if v not in out:
            out.append(v)
    return tuple(out)


def _dedupe(terms: list[Term]) -> list[Term]:
    """Unique terms (order of variables ignored), main effects first, then by degree."""
    seen, out = set(), []
    for t in terms:
        key = frozenset(t)
        if key not in seen:
            seen.add(key)
            out.append(t)
    return sorted(out, key=len)  # stable: keeps first-appearance order within a degree


def parse(text: str) -> Formula:
    if not text or not text.strip():
        raise PovstimError("empty formula: give a right-hand side like 'size * filtered + (1|seed)'")
    return _Parser(text).parse()
