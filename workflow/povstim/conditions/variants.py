"""Counterfactual variants for the ``replace`` operation: each rewrites one parsed sentence (CoNLL-U) of a
construction into a variant that follows the *wrong* rule, keeping every word (the word count never changes).

A variant is a function ``(Sentence) -> str | Skip``: the rewritten text, or a :class:`Skip` saying why the
sentence has no such variant (the audit records it). Register one with :func:`register`; ``VARIANTS`` maps
construction -> variant name -> function, and ``default_variant`` names the one ``replace`` uses when the
config names none.

- ``question_formation`` / ``linear_rule``: the question formed by fronting the *linearly first* auxiliary of
  the declarative instead of the main clause's: *Is the boy who is smiling happy?* -> *Is the boy who
  smiling is happy?* (the main auxiliary goes back after the subject, the first auxiliary inside the subject
  is fronted).
- ``binding`` / ``wrong_antecedent``: the reflexive swapped for the one agreeing with the nearest other
  animate noun phrase instead of its binder (the subject of its clause): *The girl said that the boy hurt
  himself.* -> *The girl said that the boy hurt herself.*
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .. import lexicon
from ..io import PovstimError
from ..parse.conllu import Sentence, Token


@dataclass(frozen=True)
class Skip:
    reason: str


Variant = Callable[[Sentence], "str | Skip"]
VARIANTS: dict[str, dict[str, Variant]] = {}
FIRST_VARIANT: dict[str, str] = {}


def register(construction: str, name: str, default: bool = False):
    def deco(fn: Variant) -> Variant:
        VARIANTS.setdefault(construction, {})[name] = fn
        if default or construction not in FIRST_VARIANT:
            FIRST_VARIANT[construction] = name
        return fn
    return deco


def default_variant(construction: str) -> str | None:
    return FIRST_VARIANT.get(construction)


def get(construction: str, name: str | None, where: str) -> Variant:
    """The registered variant, or an error naming ``where`` (the config key) and what is registered."""
    known = VARIANTS.get(construction)
    if not known:
        raise PovstimError(f"{where}: no counterfactual variant is registered for {construction!r} "
                           f"(registered: {', '.join(f'{c}/{v}' for c in sorted(VARIANTS) for v in VARIANTS[c])})")
    name = name or FIRST_VARIANT[construction]
    if name not in known:
        raise PovstimError(f"{where}: {construction!r} has no variant {name!r} (registered: {', '.join(sorted(known))})")
    return known[name]


def render(tokens: list[Token]) -> str:
    """Forms joined by a space, except after a token with SpaceAfter=No."""
    out = []
    for k, t in enumerate(tokens):
        out.append(t.form)
        if k < len(tokens) - 1 and "SpaceAfter=No" not in t.misc:
            out.append(" ")
    return "".join(out)


def _subtree(tokens: list[Token], head: int) -> set[int]:
    kids: dict[int, list[int]] = {}
    for t in tokens:
        kids.setdefault(t.head, []).append(t.id)
    out, todo = set(), [head]
    while todo:
        i = todo.pop()
        out.add(i)
        todo.extend(kids.get(i, []))
    return out


def _cap(form: str, first: bool, tok: Token) -> str:
    if first:
        return form[:1].upper() + form[1:]
    if tok.upos == "PROPN" or form == "I":
        return form
    return form[:1].lower() + form[1:]


_DO = ("do", "does", "did")


@register("question_formation", "linear_rule", default=True)
def linear_rule(sent: Sentence) -> str | Skip:
    toks = [t for t in sent.tokens]
    by_id = {t.id: t for t in toks}
    root = next((t for t in toks if t.head == 0), None)
    if root is None or not sent.text.rstrip().endswith("?"):
        return Skip("not a question")
    subj = next((t for t in toks if t.head == root.id and t.deprel.split(":")[0] == "nsubj"), None)
    if subj is None:
        return Skip("no main-clause subject")
    span = sorted(_subtree(toks, subj.id))
    if span != list(range(span[0], span[-1] + 1)):
        return Skip("the subject is not contiguous")
    main = by_id.get(span[0] - 1)
    if main is None or main.head != root.id or main.deprel not in ("aux", "cop", "aux:pass"):
        return Skip("no fronted main-clause auxiliary before the subject")
    if main.deprel == "aux" and (main.lemma.lower() == "do" or main.form.lower() in _DO):
        # do-support: the declarative ("The boy who is smiling likes cats.") has no main auxiliary to put back,
        # so moving "does" behind the subject is not the linear rule's question (docs/manipulations.md)
        return Skip("do-support: the declarative has no main-clause auxiliary")
    first = next((by_id[i] for i in span if by_id[i].upos == "AUX"), None)
    if first is None:
        return Skip("no auxiliary inside the subject: the linear rule fronts the main one too")
    if any("SpaceAfter=No" in t.misc for t in (main, first)):
        return Skip("a moved auxiliary is attached to the next token")
    prefix = [t for t in toks if t.id < main.id]
    rest = [t for t in toks if t.id > span[-1]]
    subject = [by_id[i] for i in span if i != first.id]
    order = prefix + [first] + subject + [main] + rest
    start = len(prefix)
    out = []
    for k, t in enumerate(order):
        form = t.form
        if k in (start, start + 1) or t is main:  # the new first word, the old one and the moved auxiliary
            form = _cap(form, k == 0, t)
        out.append(Token(t.id, form, misc=t.misc))
    return render(out)


_REFL = {("m", "Sing", "3"): "himself", ("f", "Sing", "3"): "herself", ("n", "Sing", "3"): "itself",
         ("Plur", "3"): "themselves", ("Sing", "1"): "myself", ("Plur", "1"): "ourselves",
         ("Sing", "2"): "yourself", ("Plur", "2"): "yourselves"}
_GENDER = {"Masc": "m", "Fem": "f", "Neut": "n"}


def _lexical_gender(tok: Token) -> str | None:
    word = tok.form.lower()
    for n in lexicon.NN_M:
        if word in (n.sg, n.pl):
            return "m"
    for n in lexicon.NN_F:
        if word in (n.sg, n.pl):
            return "f"
    for n in lexicon.NAMES_M:
        if tok.form == n.form:
            return "m"
    for n in lexicon.NAMES_F:
        if tok.form == n.form:
            return "f"
    return None


def reflexive_for(tok: Token) -> str | None:
    """The reflexive that agrees with a noun phrase's head, or None when its gender is unknown."""
    number = tok.feat("Number") or "Sing"
    person = tok.feat("Person") or "3"
    if number == "Plur" or person != "3":
        return _REFL.get((number, person))
    gender = _GENDER.get(tok.feat("Gender") or "") or _lexical_gender(tok)
    if gender is None and tok.feat("Animacy") == "Inan":
        gender = "n"
    return _REFL.get((gender, number, person)) if gender else None


def _animate(t: Token) -> bool:
    return (t.upos in ("NOUN", "PROPN", "PRON") and t.feat("Reflex") != "Yes" and t.feat("PronType") != "Rel"
            and t.feat("Animacy") != "Inan" and t.feat("Poss") != "Yes")


@register("binding", "wrong_antecedent", default=True)
def wrong_antecedent(sent: Sentence) -> str | Skip:
    toks = sent.tokens
    refl = next((t for t in toks if t.feat("Reflex") == "Yes" and t.upos == "PRON"), None)
    if refl is None:
        return Skip("no reflexive")
    binder = next((t for t in toks if t.head == refl.head and t.deprel.split(":")[0] == "nsubj"), None)
    others = [t for t in toks if t.id < refl.id and _animate(t) and (binder is None or t.id != binder.id)]
    if not others:
        return Skip("no other animate noun phrase before the reflexive")
    wrong = others[-1]
    form = reflexive_for(wrong)
    if form is None:
        return Skip(f"the gender of {wrong.form!r} is unknown")
    if form == refl.form.lower():
        return Skip(f"{wrong.form!r} takes the same reflexive ({form})")
    return render([Token(t.id, form if t is refl else t.form, misc=t.misc) for t in toks])


# --- AANN (constructions/library/aann.yaml): "a beautiful five days". The letters name the four slots of the
# original in order, A(rticle) A(djective) N(umeral) N(oun); a variant permutes the first three:
#   ANAN: article numeral adjective noun   "a five beautiful days"
#   NAAN: numeral article adjective noun   "five a beautiful days"
# The article's form follows its new neighbour (a/an by the next word's first letter).

def _aann_slots(sent: Sentence):
    toks = sent.tokens
    by_id = {t.id: t for t in toks}
    for det in toks:
        if det.form.lower() not in ("a", "an") or det.deprel != "det":
            continue
        noun = by_id.get(det.head)
        if noun is None or noun.upos not in ("NOUN", "PROPN"):
            continue
        num = next((t for t in toks if t.head == noun.id and t.upos == "NUM" and det.id < t.id < noun.id), None)
        if num is None or num.id + 1 != noun.id:
            continue
        adjs = [by_id[i] for i in range(det.id + 1, num.id)]
        if not adjs or not any(t.upos == "ADJ" for t in adjs):
            continue
        return det, adjs, num, noun
    return None


def _article(next_form: str, like: str) -> str:
    form = "an" if next_form[:1].lower() in "aeiou" else "a"
    return form.capitalize() if like[:1].isupper() else form


def _aann(sent: Sentence, order: str) -> str | Skip:
    slots = _aann_slots(sent)
    if slots is None:
        return Skip("no article + adjective + numeral + noun sequence")
    det, adjs, num, noun = slots
    if any("SpaceAfter=No" in t.misc for t in [det, *adjs, num]):
        return Skip("a moved word is attached to the next token")
    first = det.id == sent.tokens[0].id
    groups = {"art": [det], "adj": adjs, "num": [num]}
    middle = [t for g in order.split() for t in groups[g]]
    before = [t for t in sent.tokens if t.id < det.id]
    after = [t for t in sent.tokens if t.id >= noun.id]
    seq = before + middle + after
    out = []
    for k, t in enumerate(seq):
        form = t.form
        if t in middle:
            if first:
                form = _cap(form, k == 0, t)
            if t is det:
                form = _article(seq[k + 1].form, "A" if first and k == 0 else "a")
        out.append(Token(t.id, form, misc=t.misc))
    return render(out)


@register("aann", "anan", default=True)
def anan(sent: Sentence) -> str | Skip:
    return _aann(sent, "art num adj")


@register("aann", "naan")
def naan(sent: Sentence) -> str | Skip:
    return _aann(sent, "num art adj")
