"""Binding (Principle A): a reflexive with more than one potential antecedent.

Direct positive evidence shows which of several noun phrases a reflexive
takes as its antecedent ("The girl said that the boy hurt himself").
"""

from __future__ import annotations

from .registry import Context, Phenomenon, register
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


# Forms that are potential antecedents whatever the tagger calls them (conservative mode).
NOMINAL_FORMS = frozenset(
    """i me my mine you your yours he him his she her hers it its we us our ours they them their theirs
    this that these those one ones somebody someone anybody anyone everybody everyone nobody""".split()
)


def is_potential_antecedent(tok: Token) -> bool:
    """A noun or pronoun by the tagger's UPOS or its Penn tag, by form (the closed class of
    pronouns), or a capitalised word after the first (a name the tagger missed)."""
    if _self_word(tok) or not any(c.isalpha() for c in tok.form):
        return False
    if tok.upos in ("NOUN", "PROPN", "PRON") or tok.xpos.startswith(("NN", "PRP", "WP")):
        return True
    return low(tok) in NOMINAL_FORMS or (tok.id > 1 and tok.form[:1].isupper() and tok.form.lower() != "i")


def binding_conservative_self_after_two_nominals(sent: Sentence, ctx: Context):
    """App. C's test with potential antecedents found by POS tag *or* form (any tag the parser could
    have got wrong): a word ending in *self/selves* preceded by two nouns or pronouns."""
    nominals: list[Token] = []
    for t in sent.tokens:
        if _self_word(t) and len(nominals) >= 2:
            return (t, nominals[-2], nominals[-1])
        if is_potential_antecedent(t):
            nominals.append(t)
    return None


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
    rules={"posh": binding_posh_self_after_two_nominals, "strict": binding_strict_two_animate_antecedents,
           "conservative": binding_conservative_self_after_two_nominals},
    surface=surface,
    sanity=sanity,
    description="reflexives with two or more potential antecedents",
))
