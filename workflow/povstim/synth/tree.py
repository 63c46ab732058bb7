"""Tokens that know their head, and their rendering to text + CoNLL-U.

The grammar builds each sentence as a list of ``Tok`` objects in surface order;
a token points at its head *object* (not an index), so phrases can be built
separately and concatenated in any order. ``render`` numbers the tokens,
turns head objects into indices and writes the text line and the CoNLL-U
block, so the two can never disagree.
"""

from __future__ import annotations

from ..io import PovstimError

# Tokens glued to the previous one in the text ("Mary's", "don't", "happy?").
_GLUE = frozenset({".", "?", "!", ",", "'s", "n't"})


class Tok:
    __slots__ = ("form", "lemma", "upos", "feats", "head", "deprel")

    def __init__(self, form: str, lemma: str, upos: str, feats: str = "_"):
        self.form = form
        self.lemma = lemma
        self.upos = upos
        self.feats = feats
        self.head: Tok | None = None
        self.deprel = "_"


def attach(child: Tok, head: Tok, deprel: str) -> Tok:
    child.head = head
    child.deprel = deprel
    return child


_FEATS_CACHE: dict[tuple, str] = {}


def feats(**kw) -> str:
    """UD FEATS string, keys sorted as UD requires; None values dropped."""
    key = tuple(kw.items())  # call-site order: a cheap cache key; sorting only on a miss
    s = _FEATS_CACHE.get(key)
    if s is None:
        s = "|".join(f"{k}={v}" for k, v in sorted(key) if v is not None) or "_"
        _FEATS_CACHE[key] = s
    return s


def capitalize(form: str) -> str:
    return form[:1].upper() + form[1:]


def render(toks: list[Tok], sent_id: int, meta: dict[str, str]) -> tuple[str, str]:
    """Return (text line, CoNLL-U block) for one sentence; checks the tree."""
    index = {id(t): i + 1 for i, t in enumerate(toks)}
    forms = [t.form for t in toks]
    forms[0] = capitalize(forms[0])
    space_after = [True] * len(toks)
    for i in range(1, len(toks)):
        if toks[i].form in _GLUE:
            space_after[i - 1] = False
    parts = []
    for i, f in enumerate(forms):
        parts.append(f)
        if space_after[i] and i + 1 < len(forms):
            parts.append(" ")
    text = "".join(parts)
    lines = [f"# sent_id = {sent_id}", f"# text = {text}"]
    lines.extend(f"# {k} = {v}" for k, v in meta.items())
    roots = 0
    for i, t in enumerate(toks):
        if t.head is None:
            head = 0
            roots += 1
        else:
            head = index.get(id(t.head))
            if head is None:
                raise PovstimError(f"synth internal error: token {t.form!r} attached outside sentence {text!r}")
        misc = "_" if space_after[i] or i + 1 == len(toks) else "SpaceAfter=No"
        lines.append(f"{i + 1}\t{forms[i]}\t{t.lemma}\t{t.upos}\t_\t{t.feats}\t{head}\t{t.deprel}\t_\t{misc}")
    if roots != 1:
        raise PovstimError(f"synth internal error: {roots} roots in {text!r}")
    return text, "\n".join(lines) + "\n\n"
