"""The gold definitions of DPE, computed from a tree, and CoNLL-U checks.

These restate CONVENTIONS' definitions over a parsed sentence, independently
of how the generator built it; the tests compare them with the generator's
``# dpe`` labels on every sentence.

* question_formation: the sentence is a question (ends in '?') and a subject
  (``nsubj``) of the root has an ``acl:relcl`` dependent.
* binding: a reflexive (``Reflex=Yes``) is preceded by two or more animate
  noun phrases, i.e. NOUN / PROPN / PRON tokens marked ``Animacy=Anim`` that
  are not reflexives or relative pronouns.
"""

from __future__ import annotations

from ..parse.conllu import Sentence

NOMINAL = frozenset({"NOUN", "PROPN", "PRON"})


def is_question(sent: Sentence) -> bool:
    return sent.tokens[-1].form == "?"


def question_formation(sent: Sentence) -> bool:
    if not is_question(sent):
        return False
    roots = [t.id for t in sent.tokens if t.head == 0]
    subjects = {t.id for t in sent.tokens if t.head in roots and t.deprel in ("nsubj", "nsubj:pass")}
    return any(t.deprel == "acl:relcl" and t.head in subjects for t in sent.tokens)


def animate_np(tok) -> bool:
    return (tok.upos in NOMINAL and tok.feat("Animacy") == "Anim"
            and tok.feat("Reflex") != "Yes" and tok.feat("PronType") != "Rel")


def binding(sent: Sentence) -> bool:
    animate = 0
    for t in sent.tokens:
        if t.feat("Reflex") == "Yes" and animate >= 2:
            return True
        if animate_np(t):
            animate += 1
    return False


def label(sent: Sentence) -> str:
    qf, b = question_formation(sent), binding(sent)
    if qf and b:
        return "question_formation+binding"
    return "question_formation" if qf else "binding" if b else "none"


def tree_errors(sent: Sentence) -> list[str]:
    """Problems that make a CoNLL-U sentence not a well-formed dependency tree."""
    errors = []
    n = len(sent.tokens)
    ids = [t.id for t in sent.tokens]
    if ids != list(range(1, n + 1)):
        errors.append(f"token ids are not 1..{n}: {ids}")
    roots = [t for t in sent.tokens if t.head == 0]
    if len(roots) != 1:
        errors.append(f"{len(roots)} tokens with head 0")
    for t in sent.tokens:
        if not 0 <= t.head <= n:
            errors.append(f"token {t.id} head {t.head} out of range")
        if (t.head == 0) != (t.deprel == "root"):
            errors.append(f"token {t.id}: head {t.head} with deprel {t.deprel}")
        if t.head == t.id:
            errors.append(f"token {t.id} is its own head")
    if errors:
        return errors
    heads = {t.id: t.head for t in sent.tokens}
    for t in sent.tokens:
        seen, cur = set(), t.id
        while cur != 0:
            if cur in seen:
                return [f"cycle through token {t.id}"]
            seen.add(cur)
            cur = heads[cur]
    return []


def text_of(sent: Sentence) -> str:
    """Rebuild the text from the forms and SpaceAfter=No."""
    parts = []
    for i, t in enumerate(sent.tokens):
        parts.append(t.form)
        if i + 1 < len(sent.tokens) and "SpaceAfter=No" not in t.misc:
            parts.append(" ")
    return "".join(parts)
