"""Helpers of the rules over a parsed sentence (UD v2 labels)."""

from __future__ import annotations

from ..parse.conllu import Sentence, Token
from .surface import norm
from .words import AUX_FORMS, REFLEXIVES


def low(tok: Token) -> str:
    return norm(tok.form)


def is_word(tok: Token) -> bool:
    return any(c.isalnum() for c in tok.form)


def word_tokens(sent: Sentence) -> list[Token]:
    return [t for t in sent.tokens if is_word(t)]


def is_aux(tok: Token) -> bool:
    # The parser must call it an auxiliary AND it must be one of the closed
    # forms: the pre-test can then test the form alone and stay a necessary
    # condition of the rule.
    return tok.upos == "AUX" and low(tok) in AUX_FORMS


def base_rel(tok: Token) -> str:
    """The universal relation without subtypes: ``nsubj:pass`` -> ``nsubj``."""
    return tok.deprel.split(":")[0]


def has_rel(tok: Token, rel: str) -> bool:
    """``tok``'s relation is ``rel`` or one of its subtypes: ``has_rel(t, "acl:relcl")`` is true for
    ``acl:relcl`` and for ``acl:relcl:subj``/``acl:relcl:obj`` (subtypes real CHILDES treebanks use)."""
    return tok.deprel == rel or tok.deprel.startswith(rel + ":")


def children(sent: Sentence) -> dict[int, list[Token]]:
    out: dict[int, list[Token]] = {}
    for t in sent.tokens:
        out.setdefault(t.head, []).append(t)
    return out


def subtree(tok: Token, kids: dict[int, list[Token]]) -> list[Token]:
    out, stack, seen = [], [tok], set()
    while stack:
        t = stack.pop()
        if t.id in seen:  # a cyclic (malformed) tree must not hang the filter
            continue
        seen.add(t.id)
        out.append(t)
        stack.extend(kids.get(t.id, []))
    return sorted(out, key=lambda t: t.id)


def is_reflexive(tok: Token) -> bool:
    return tok.feat("Reflex") == "Yes" or low(tok) in REFLEXIVES
