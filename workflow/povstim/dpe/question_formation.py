"""Question formation (POSH §2.2): auxiliary fronting across a subject relative clause.

Direct positive evidence is a yes/no question whose main-clause subject holds a
relative clause ("Is the boy who is smiling happy?"): it shows that the
*main* auxiliary is fronted, not the first one.
"""

from __future__ import annotations

from . import Context, Phenomenon, register
from .surface import ends_with_question_mark, lower_words, norm
from .tree import base_rel, children, is_aux, low, subtree, word_tokens
from .words import AUX_FORMS, WH_WORDS
from ..parse.conllu import Sentence, Token
from ..parse.tokenize import words_only


def surface(words: list[str], text: str) -> bool:
    """Interrogative on the surface, and three words (the nsubj, the acl:relcl and the root differ)."""
    lw = [norm(w) for w in words_only(words)]
    if len(lw) < 3:
        return False
    return ends_with_question_mark(text) or any(w in WH_WORDS for w in lw) or any(w in AUX_FORMS for w in lw[:2])


def posh_interrogative(sent: Sentence) -> tuple[Token, ...] | None:
    """App. C (ii): final question mark, a wh-word anywhere, or an auxiliary among the first two tokens."""
    words = word_tokens(sent)
    if ends_with_question_mark(sent.text):
        return tuple(t for t in sent.tokens[-1:])
    for t in words:
        if low(t) in WH_WORDS:
            return (t,)
    for t in words[:2]:
        if is_aux(t):
            return (t,)
    return None


def qf_posh_interrogative_nsubj_before_relcl(sent: Sentence, ctx: Context):
    """App. C: interrogative AND some ``nsubj`` token precedes some ``acl:relcl`` token."""
    if len(word_tokens(sent)) < 3 or posh_interrogative(sent) is None:
        return None
    subj = next((t for t in sent.tokens if base_rel(t) == "nsubj"), None)
    if subj is None:
        return None
    rel = next((t for t in sent.tokens if t.deprel == "acl:relcl" and t.id > subj.id), None)
    return (subj, rel) if rel is not None else None


def strict_question(sent: Sentence) -> bool:
    words = word_tokens(sent)
    if not words:
        return False
    return ends_with_question_mark(sent.text) or is_aux(words[0]) or low(words[0]) in WH_WORDS


def is_relative(tok: Token) -> bool:
    # acl:relcl covers full and zero-relativizer ("the dog the girl saw") relatives.
    # Participial modifiers (acl: "the dog sitting there") are left out on purpose:
    # they hold no auxiliary, so "Is the dog sitting there sleepy?" cannot tell
    # the linear rule from the structural one, and spaCy tags the progressive of
    # ordinary questions ("Is Daddy driving the truck?") as acl.
    return tok.deprel == "acl:relcl"


def main_predicates(sent: Sentence, kids: dict[int, list[Token]]) -> list[Token]:
    roots = [t for t in sent.tokens if t.head == 0]
    out, stack = [], list(roots)
    while stack:
        t = stack.pop()
        if t in out:
            continue
        out.append(t)
        stack.extend(k for k in kids.get(t.id, []) if k.deprel == "conj" and k.upos in ("VERB", "AUX", "ADJ", "NOUN", "PROPN", "PRON"))
    return out


def qf_strict_subject_relative_question(sent: Sentence, ctx: Context):
    """A question (final ``?``, auxiliary- or wh-initial) whose main-clause subject holds a relative clause."""
    if len(word_tokens(sent)) < 3 or not strict_question(sent):
        return None
    kids = children(sent)
    for pred in main_predicates(sent, kids):
        deps = kids.get(pred.id, [])
        if any(d.deprel == "expl" for d in deps):
            continue  # "Is there a boy who ...?": the relative follows the auxiliary, no evidence
        for subj in deps:
            if base_rel(subj) != "nsubj":
                continue
            for t in subtree(subj, kids):
                if t is not subj and is_relative(t):
                    return (subj, t)
    return None


def sanity(words: list[str], text: str) -> bool:
    """App. C sanity check: a question mark and at least two auxiliaries."""
    if "?" not in text:
        return False
    return sum(w in AUX_FORMS for w in lower_words(text)) >= 2


register(Phenomenon(
    name="question_formation",
    rules={"posh": qf_posh_interrogative_nsubj_before_relcl, "strict": qf_strict_subject_relative_question},
    surface=surface,
    sanity=sanity,
    description="yes/no questions whose subject holds a relative clause",
))
