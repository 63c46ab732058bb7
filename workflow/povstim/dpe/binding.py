"""Binding (Principle A): a reflexive with more than one potential antecedent.

Direct positive evidence shows which of several noun phrases a reflexive
takes as its antecedent ("The girl said that the boy hurt himself").
"""

from __future__ import annotations

from . import Context, Phenomenon, register
from .surface import lower_words, norm
from .tree import is_reflexive, low
from .words import ANIMATE_PRONOUNS, REFLEXIVES
from ..parse.conllu import Sentence, Token


def surface(words: list[str], text: str) -> bool:
    """A word ending in self/selves with at least two tokens before it."""
    return any(i >= 2 and norm(w).endswith(("self", "selves")) for i, w in enumerate(words))


def _self_word(tok: Token) -> bool:
    f = low(tok)
    return f.endswith("self") or f.endswith("selves")


def binding_posh_self_after_two_nominals(sent: Sentence, ctx: Context):
    """App. C: a word ending in *self/selves* preceded by at least two noun or pronoun tokens."""
    nominals: list[Token] = []
    for t in sent.tokens:
        if _self_word(t) and len(nominals) >= 2:
            return (t, nominals[-2], nominals[-1])
        if t.upos in ("NOUN", "PROPN", "PRON"):
            nominals.append(t)
    return None


def is_animate_np(tok: Token, ctx: Context) -> bool:
    """A token that heads (or is) an animate noun phrase: a potential antecedent."""
    form = low(tok)
    if tok.deprel in ("compound", "flat", "fixed") or is_reflexive(tok):
        return False
    animacy = tok.feat("Animacy")  # a parse that annotates animacy (the synthetic gold does) decides
    if animacy is not None and tok.upos in ("NOUN", "PROPN", "PRON"):
        return animacy == "Anim" and tok.feat("PronType") not in ("Rel", "Int")
    if tok.upos == "PRON":
        return form in ANIMATE_PRONOUNS and tok.feat("PronType") not in ("Rel", "Int")
    if tok.upos == "PROPN":
        return True
    if tok.upos == "NOUN":
        lemma = tok.lemma.lower() if tok.lemma not in ("_", "") else form
        return lemma in ctx.animate_nouns or form in ctx.animate_nouns
    if tok.upos == "DET" and form in ANIMATE_PRONOUNS:  # possessive determiners tagged DET
        return tok.feat("Poss") == "Yes" or form in ("my", "your", "his", "her", "our", "their")
    return False


def binding_strict_two_animate_antecedents(sent: Sentence, ctx: Context):
    """A reflexive pronoun with two or more potential (animate) antecedents before it."""
    antecedents: list[Token] = []
    for t in sent.tokens:
        if is_reflexive(t) and _self_word(t) and len(antecedents) >= 2:
            return (t, antecedents[-2], antecedents[-1])
        if is_animate_np(t, ctx):
            antecedents.append(t)
    return None


def sanity(words: list[str], text: str) -> bool:
    """App. C sanity check: the sentence holds a reflexive."""
    return any(w in REFLEXIVES for w in lower_words(text))


register(Phenomenon(
    name="binding",
    rules={"posh": binding_posh_self_after_two_nominals, "strict": binding_strict_two_animate_antecedents},
    surface=surface,
    sanity=sanity,
    description="reflexives with two or more potential antecedents",
))
