"""The POSH-BENCH generator: templated minimal pairs for the 10 subcategories
(well, 9 paradigms over 4 categories) of POSH Table 8/10, from the templates of
POSH Table 13.

Each template returns the bad and good token lists plus how they must differ:
``("sub", bad_word, good_word)`` — the same sentence with exactly one word
replaced — or ``("move", phrases)`` — the same words, with the listed phrases
moved (deleting them from both sentences leaves identical sequences). Every
generated pair is checked against that before it is kept.

Every template keeps POSH Table 13's pattern verbatim (``Template.table13``,
bad and good) plus the textual deviations we make from it
(``Template.deviations``), all for grammaticality of the sentences:
binding subjects get a determiner ("{det} {nn_m}": a bare singular noun cannot be a
subject); "{det}{nn_f}" is read as "{det} {nn_f}"; the subject-relative template 2
reads "{verb1} {det2} {noun1}" (the table's "{det2} the {noun1}" doubles the
determiner); the complex-NP *what* template extracts a thing ("the {nn_obj}", not
"{person2}"); the *wanna* transitive template's verb takes its thing object
("{vb_trans} the {nn2_obj}", the table's slot says vb_trans_animate).

What the slots hold decides whether a bad sentence is bad for the intended
reason (tests/test_posh_table13.py checks every pair against the table, slot by
slot, with word sets of its own):

* wh-island: the embedding verb takes the complement of *both* members:
  ``{vb_state}`` (whether/that) and ``{vb_question}`` (who/{pron}) are verbs that
  take a declarative and an interrogative complement (know, remember, forget,
  notice, hear: ``lexicon.VB_WH_EMBED``). With think/say the bad member would be
  bad by verb selection ("Who did he think whether Sarah called?"), with wonder
  the good member would be ("What did she wonder he bought?").
* *wanna* intransitive: ``{vb_intrans_animate}`` is strictly intransitive (sleep,
  cry, laugh, ...): with play/sing/run the bad member is grammatical ("What does
  Mary wanna sing?").
* a bad perception binding sentence never uses a verb whose past equals its bare
  form ("saw herself read the book" is grammatical) nor a stative verb; templates
  whose object is extracted by "what" take an inanimate object noun.

For plausibility, inanimate objects respect the verbs' selectional restrictions
(``words.objects_for``: "eat the cake", not "eat the car"), and the two verbs of an
island template differ ("buy without buying the spoon").
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from ..io import PovstimError
from .suite import POSH_CATEGORIES, Pair
from .words import Lexicon, Verb, objects_for, pool_report, word_counts, word_ranks


class _Retry(Exception):
    """The drawn words cannot fill the template plausibly: draw again."""

Tokens = list[str]
Check = tuple


class _Pick:
    """Slot sampling from the lexicon, keeping only forms in the frequent-word set."""

    def __init__(self, rng: random.Random, lex: Lexicon, where: str):
        self.rng, self.lex, self.where = rng, lex, where

    def _one(self, items, cls):
        if not items:
            raise PovstimError(
                f"POSH-BENCH {self.where}: no word of class '{cls}' survives the top-K frequency "
                "filter (and, with vocabulary: corpus, the parses' part-of-speech check: see the "
                "manifest's rejected_by_parses); raise benchmarks.<suite>.top_k_words or use larger corpora"
            )
        return self.rng.choice(items)

    def verb(self, cls: str, *forms: str) -> Verb:
        """A verb of ``cls`` whose ``forms`` (attribute names) are all frequent enough."""
        items = [v for v in self.lex.verbs[cls] if self.lex.ok(*(getattr(v, f) for f in forms))]
        return self._one(items, f"verb.{cls}")

    def noun(self, *classes: str) -> str:
        items = sorted({w for c in classes for w in self.lex.nouns[c] if self.lex.ok(w)})
        return self._one(items, "noun." + "|".join(classes))

    def thing(self, *verbs: Verb) -> str:
        """An inanimate object every one of ``verbs`` plausibly takes."""
        items = [w for w in self.lex.nouns["object"] if self.lex.ok(w)]
        if not items:
            self._one(items, "noun.object")
        for v in verbs:
            items = objects_for(v.base, items)
        if not items:
            raise _Retry()
        return self.rng.choice(items)

    def name(self, gender: str | None = None) -> str:
        genders = [gender] if gender else ["f", "m"]
        items = sorted({w for g in genders for w in self.lex.names[g] if self.lex.ok(w)})
        return self._one(items, f"name.{gender or 'any'}")

    def closed(self, cls: str, exclude=()) -> str:
        # Function words frame the templates (POSH keeps "wanna", "whether" whatever
        # their frequency), so a closed class is only narrowed when something is left.
        words = [w for w in self.lex.closed[cls] if w not in exclude]
        frequent = [w for w in words if self.lex.ok(w)]
        return self._one(frequent or words, cls)


HUMAN = ("human_m", "human_f", "human_n")
STATIVE = {"have", "need", "want"}
ANIMATE = HUMAN + ("animal",)
REFL = {"m": "himself", "f": "herself"}
OTHER = {"m": "f", "f": "m"}


# ---------------------------------------------------------------- Binding
def _cc_possessor(p: _Pick, g: str) -> tuple[Tokens, Tokens, Check]:
    # {nn_g} {vb_state} that {name_g2}'s {nn_o1} {vb_trans_animate} REFL(g)/REFL(o)
    o = OTHER[g]
    head = [p.closed("det"), p.noun(f"human_{g}"), p.verb("state", "past").past, "that",
            p.name(g), "'s", p.noun(f"human_{o}"), p.verb("refl", "past").past]
    return head + [REFL[g], "."], head + [REFL[o], "."], ("sub", REFL[g], REFL[o])


def _cc_relative(p: _Pick, g: str) -> tuple[Tokens, Tokens, Check]:
    # {nn_g} {vb_state} that the {nn_o2} who {vb_trans_animate} {det}{nn_g} {vb2} REFL(g)/REFL(o)
    o = OTHER[g]
    head = [p.closed("det"), p.noun(f"human_{g}"), p.verb("state", "past").past, "that", "the",
            p.noun(f"human_{o}"), "who", p.verb("trans_animate", "past").past, p.closed("det"),
            p.noun(f"human_{g}"), p.verb("refl", "past").past]
    return head + [REFL[g], "."], head + [REFL[o], "."], ("sub", REFL[g], REFL[o])


def _loc_clause(p: _Pick, g: str) -> tuple[Tokens, Tokens, Check]:
    # {nn_g} {vb_state} that the {nn_o1} {vb_trans_animate} REFL(g)/REFL(o)
    o = OTHER[g]
    head = [p.closed("det"), p.noun(f"human_{g}"), p.verb("state", "past").past, "that", "the",
            p.noun(f"human_{o}"), p.verb("refl", "past").past]
    return head + [REFL[g], "."], head + [REFL[o], "."], ("sub", REFL[g], REFL[o])


def _loc_perception(p: _Pick, g: str) -> tuple[Tokens, Tokens, Check]:
    # {nn_g} {vb_percep} REFL(g) {vb_ed}/{vb_gerund} {det} {nn}
    head = [p.closed("det"), p.noun(f"human_{g}"), p.verb("percep", "past").past, REFL[g]]
    v = p.verb("trans_object", "past", "ger")
    # "saw herself read the book" is grammatical; states ("saw herself having") are odd
    if v.past == v.base or v.base in STATIVE:
        raise _Retry()
    tail = [p.closed("det_obj"), p.thing(v), "."]
    return head + [v.past] + tail, head + [v.ger] + tail, ("sub", v.past, v.ger)


# ---------------------------------------------------------------- Islands
def _adjunct_who(p: _Pick) -> tuple[Tokens, Tokens, Check]:
    # Who should {det} {person} {trans_verb1} {nn_person} {pp} {trans_verb_gerund}?
    v1, v2 = p.verb("trans_animate", "base"), p.verb("trans_animate", "ger")
    if v1 == v2:
        raise _Retry()
    pre = ["who", "should", p.closed("det"), p.noun(*HUMAN), v1.base]
    obj = [p.name()]
    pp, ger = p.closed("pp"), v2.ger
    return pre + obj + [pp, ger, "?"], pre + [pp, ger] + obj + ["?"], ("move", [obj])


def _adjunct_what(p: _Pick) -> tuple[Tokens, Tokens, Check]:
    # What did {det} {person} {trans_verb2} the {nn_obj} {pp} {trans_verb_gerund}?
    v1, v2 = p.verb("trans_object", "base"), p.verb("trans_object", "ger")
    if v1 == v2:  # "buy without buying the spoon"
        raise _Retry()
    pre = ["what", "did", p.closed("det"), p.noun(*HUMAN), v1.base]
    obj = ["the", p.thing(v1, v2)]
    pp, ger = p.closed("pp"), v2.ger
    return pre + obj + [pp, ger, "?"], pre + [pp, ger] + obj + ["?"], ("move", [obj])


def _complex_np_who(p: _Pick) -> tuple[Tokens, Tokens, Check]:
    # who did {det} {person} who {trans_verb} {trans_verb2} {person2}?
    v1, v2 = p.verb("trans_animate", "past"), p.verb("trans_animate", "base")
    if v1 == v2:
        raise _Retry()
    pre = ["who", "did", p.closed("det"), p.noun(*HUMAN), "who", v1.past]
    obj, v2 = [p.name()], v2.base
    return pre + [v2] + obj + ["?"], pre + obj + [v2, "?"], ("move", [obj])


def _complex_np_what(p: _Pick) -> tuple[Tokens, Tokens, Check]:
    # what did {det} {person} who {trans_verb} {trans_verb2} {person2}?
    v1, v2 = p.verb("trans_object", "past"), p.verb("trans_object", "base")
    if v1 == v2:
        raise _Retry()
    pre = ["what", "did", p.closed("det"), p.noun(*HUMAN), "who", v1.past]
    obj, v2 = ["the", p.thing(v1, v2)], v2.base
    return pre + [v2] + obj + ["?"], pre + obj + [v2, "?"], ("move", [obj])


def _wh_whether(p: _Pick, wh: str) -> tuple[Tokens, Tokens, Check]:
    # {wh} did {det} {person} {vb_state} whether/that {name} {vb_trans}?
    # {vb_state} must take both a that- and a whether-clause (know, remember, ...):
    # "think whether" would make the bad member bad by selection, not by the island.
    cls = "trans_animate" if wh == "who" else "trans_object"
    pre = [wh, "did", p.closed("det"), p.noun(*HUMAN), p.verb("wh_embed", "base").base]
    post = [p.name(), p.verb(cls, "past").past, "?"]
    return pre + ["whether"] + post, pre + ["that"] + post, ("sub", "whether", "that")


def _wh_who(p: _Pick, tense: str) -> tuple[Tokens, Tokens, Check]:
    # what {aux} {det} {person} {vb_question} who/{pron} {vb_trans}?
    # {vb_question} must take an embedded question (bad member: "... know who bought")
    # AND a bare declarative (good member: "... know he bought"): not think (no
    # question), not wonder (no declarative).
    pre = ["what", p.closed("aux_do"), p.closed("det"), p.noun(*HUMAN), p.verb("wh_embed", "base").base]
    v = p.verb("trans_object", "past" if tense == "past" else "s3")
    post = [v.past if tense == "past" else v.s3, "?"]
    pron = p.closed("pron")
    return pre + ["who"] + post, pre + [pron] + post, ("sub", "who", pron)


# ---------------------------------------------------------------- Question formation
def _auxes(p: _Pick) -> tuple[str, str]:
    pool = "aux_qf"
    a1 = p.closed(pool)
    a2 = p.closed(pool, exclude=(a1,))
    return a1, a2


def _qf(p: _Pick, rel: str, transitive: bool) -> tuple[Tokens, Tokens, Check]:
    """Main aux a1 fronted (good) vs relative-clause aux a2 fronted (bad)."""
    a1, a2 = _auxes(p)
    det, head = p.closed("det"), p.noun(*HUMAN)
    if transitive:
        v2 = p.verb("trans_object", "base")
        main = [v2.base, p.closed("det_obj") if rel != "rr" else "the", p.thing(v2)]
    else:
        main = [p.verb("intrans", "base").base]
    if rel == "sr":
        # {aux} {det} {nn_human} who [aux2] {verb1} the {noun1} [aux1] ...
        v1 = p.verb("trans_animate", "base").base
        obj = ["the", p.noun(*ANIMATE)] if transitive else [p.closed("det"), p.noun(*ANIMATE)]
        bad = [a2, det, head, "who", v1] + obj + [a1] + main + ["?"]
        good = [a1, det, head, "who", a2, v1] + obj + main + ["?"]
    else:
        # or: {det} {nn_human} who {det2} {noun1} [aux2] {verb1} [aux1] ...; rr: without "who"
        subj = [p.closed("det"), p.noun(*ANIMATE)]
        rel_word = ["who"] if rel == "or" else []
        v1 = p.verb("trans_animate", "base").base
        bad = [a2, det, head] + rel_word + subj + [v1, a1] + main + ["?"]
        good = [a1, det, head] + rel_word + subj + [a2, v1] + main + ["?"]
    return bad, good, ("move", [[a1], [a2]])


# ---------------------------------------------------------------- Wanna
def _wanna_trans(p: _Pick) -> tuple[Tokens, Tokens, Check]:
    # {who what}/{when how why where} {aux_sg} the {adj_person} {nn1_human} wanna {vb_trans} the {nn2_obj}?
    bad_wh, good_wh = p.closed("wh_bad"), p.closed("wh_good")
    v = p.verb("wanna_trans", "base")
    rest = [p.closed("aux_do"), "the", p.closed("adj_person"), p.noun(*HUMAN), "wanna",
            v.base, "the", p.thing(v), "?"]
    return [bad_wh] + rest, [good_wh] + rest, ("sub", bad_wh, good_wh)


def _wanna_intrans(p: _Pick) -> tuple[Tokens, Tokens, Check]:
    # {who what}/{when how why where} {aux_sg} {name} wanna {vb_intrans_animate}?
    # The verb is strictly intransitive: "What does Mary wanna sing?" is grammatical.
    bad_wh, good_wh = p.closed("wh_bad"), p.closed("wh_good")
    rest = [p.closed("aux_do"), p.name(), "wanna", p.verb("wanna_intrans", "base").base, "?"]
    return [bad_wh] + rest, [good_wh] + rest, ("sub", bad_wh, good_wh)


@dataclass(frozen=True)
class Template:
    paradigm: str
    name: str
    make: Callable[[_Pick], tuple[Tokens, Tokens, Check]]
    table13: tuple[str, str]  # (bad, good) exactly as POSH Table 13 prints them
    deviations: tuple[tuple[str, str], ...] = ()  # (Table 13 text, what we generate), both members

    def pattern(self) -> tuple[str, str]:
        """The (bad, good) patterns we generate: Table 13 with ``deviations`` applied."""
        out = []
        for text in self.table13:
            for old, new in self.deviations:
                if old not in text:
                    raise ValueError(f"template {self.name}: deviation {old!r} is not in {text!r}")
                text = text.replace(old, new)
            out.append(text)
        return out[0], out[1]


def _det_subject(slot: str) -> tuple[str, str]:
    # Table 13's binding templates start with a bare noun slot; a singular count
    # noun needs a determiner to be a subject ("The boy thought ...").
    return (f"{{{slot}}} {{vb_", f"{{det}} {{{slot}}} {{vb_")


T = Template
TEMPLATES: list[Template] = [
    T("island_adjunct", "adjunct_who", _adjunct_who, (
        "Who should {det} {person} {trans_verb1} {nn_person} {pp} {trans_verb_gerund}?",
        "Who should {det} {person} {trans_verb1} {pp} {trans_verb_gerund} {nn_person}?")),
    T("island_adjunct", "adjunct_what", _adjunct_what, (
        "What did {det} {person} {trans_verb2} the {nn_obj} {pp} {trans_verb_gerund}?",
        "What did {det} {person} {trans_verb2} {pp} {trans_verb_gerund} the {nn_obj}?")),
    T("island_complex_np", "complex_np_who", _complex_np_who, (
        "who did {det} {person} who {trans_verb} {trans_verb2} {person2}?",
        "who did {det} {person} who {trans_verb} {person2} {trans_verb2}?")),
    T("island_complex_np", "complex_np_what", _complex_np_what, (
        "what did {det} {person} who {trans_verb} {trans_verb2} {person2}?",
        "what did {det} {person} who {trans_verb} {person2} {trans_verb2}?"),
      (("{person2}", "the {nn_obj}"),)),
    T("island_wh", "whether_who", lambda p: _wh_whether(p, "who"), (
        "who did {det} {person} {vb_state} whether {name} {vb_trans1}?",
        "who did {det} {person} {vb_state} that {name} {vb_trans1}?")),
    T("island_wh", "whether_what", lambda p: _wh_whether(p, "what"), (
        "what did {det} {person} {vb_state} whether {name} {vb_trans}?",
        "what did {det} {person} {vb_state} that {name} {vb_trans}?")),
    T("island_wh", "who_past", lambda p: _wh_who(p, "past"), (
        "what {aux} {det} {person} {vb_question} who {vb_trans}?",
        "what {aux} {det} {person} {vb_question} {pron} {vb_trans}?")),
    T("island_wh", "who_present", lambda p: _wh_who(p, "present"), (
        "what {aux} {det} {person} {vb_question} who {vb_trans2}?",
        "what {aux} {det} {person} {vb_question} {pron} {vb_trans2}?")),
    T("question_formation_or", "or_transitive", lambda p: _qf(p, "or", True), (
        "{aux2} {det} {nn_human} who {det2} {noun1} {verb1} {aux1} {verb2} {det3} {noun2}?",
        "{aux1} {det} {nn_human} who {det2} {noun1} {aux2} {verb1} {verb2} {det3} {noun2}?")),
    T("question_formation_or", "or_intransitive", lambda p: _qf(p, "or", False), (
        "{aux2} {det} {nn_human} who {det2} {noun1} {verb1} {aux1} {verb_intrans}?",
        "{aux1} {det} {nn_human} who {det2} {noun1} {aux2} {verb1} {verb_intrans}?")),
    T("question_formation_sr", "sr_transitive", lambda p: _qf(p, "sr", True), (
        "{aux2} {det} {nn_human} who {verb1} the {noun1} {aux1} {verb2} {det2} {noun2}?",
        "{aux1} {det} {nn_human} who {aux2} {verb1} the {noun1} {verb2} {det2} {noun2}?")),
    T("question_formation_sr", "sr_intransitive", lambda p: _qf(p, "sr", False), (
        "{aux2} {det} {nn_human} who {verb1} {det2} the {noun1} {aux1} {verb_intrans}?",
        "{aux1} {det} {nn_human} who {aux2} {verb1} {det2} the {noun1} {verb_intrans}?"),
      (("{det2} the {noun1}", "{det2} {noun1}"),)),
    T("question_formation_rr", "rr_transitive", lambda p: _qf(p, "rr", True), (
        "{aux2} {det} {nn_human} {det2} {noun1} {verb1} {aux1} {verb2} the {noun2}?",
        "{aux1} {det} {nn_human} {det2} {noun1} {aux2} {verb1} {verb2} the {noun2}?")),
    T("question_formation_rr", "rr_intransitive", lambda p: _qf(p, "rr", False), (
        "{aux2} {det} {nn_human} {det2} {noun1} {verb1} {aux1} {verb_intrans}?",
        "{aux1} {det} {nn_human} {det2} {noun1} {aux2} {verb1} {verb_intrans}?")),
    T("principle_a_command", "cc_possessor_m", lambda p: _cc_possessor(p, "m"), (
        "{nn_m} {vb_state} that {name_m2}'s {nn_f1} {vb_trans_animate} himself.",
        "{nn_m} {vb_state} that {name_m2}'s {nn_f1} {vb_trans_animate} herself."),
      (_det_subject("nn_m"),)),
    T("principle_a_command", "cc_possessor_f", lambda p: _cc_possessor(p, "f"), (
        "{nn_f} {vb_state} that {name_f2}'s {nn_m1} {vb_trans_animate} herself.",
        "{nn_f} {vb_state} that {name_f2}'s {nn_m1} {vb_trans_animate} himself."),
      (_det_subject("nn_f"),)),
    T("principle_a_command", "cc_relative_f", lambda p: _cc_relative(p, "f"), (
        "{nn_f} {vb_state} that the {nn_m2} who {vb_trans_animate} {det}{nn_f} {vb2} herself.",
        "{nn_f} {vb_state} that the {nn_m2} who {vb_trans_animate} {det}{nn_f} {vb2} himself."),
      (_det_subject("nn_f"), ("{det}{nn_f}", "{det} {nn_f}"))),
    T("principle_a_command", "cc_relative_m", lambda p: _cc_relative(p, "m"), (
        "{nn_m} {vb_state} that the {nn_f2} who {vb_trans_animate} {det}{nn_m} {vb2} himself.",
        "{nn_m} {vb_state} that the {nn_f2} who {vb_trans_animate} {det}{nn_m} {vb2} herself."),
      (_det_subject("nn_m"), ("{det}{nn_m}", "{det} {nn_m}"))),
    T("principle_a_locality", "loc_clause_f", lambda p: _loc_clause(p, "f"), (
        "{nn_f} {vb_state} that the {nn_m1} {vb_trans_animate} herself.",
        "{nn_f} {vb_state} that the {nn_m1} {vb_trans_animate} himself."),
      (_det_subject("nn_f"),)),
    T("principle_a_locality", "loc_clause_m", lambda p: _loc_clause(p, "m"), (
        "{nn_m} {vb_state} that the {nn_f1} {vb_trans_animate} himself.",
        "{nn_m} {vb_state} that the {nn_f1} {vb_trans_animate} herself."),
      (_det_subject("nn_m"),)),
    T("principle_a_locality", "loc_perception_f", lambda p: _loc_perception(p, "f"), (
        "{nn_f} {vb_percep} herself {vb_ed} {det} {nn}.",
        "{nn_f} {vb_percep} herself {vb_gerund} {det} {nn}."),
      (_det_subject("nn_f"),)),
    T("principle_a_locality", "loc_perception_m", lambda p: _loc_perception(p, "m"), (
        "{nn_m} {vb_percep} himself {vb_ed} {det} {nn}.",
        "{nn_m} {vb_percep} himself {vb_gerund} {det} {nn}."),
      (_det_subject("nn_m"),)),
    T("wanna", "wanna_transitive", _wanna_trans, (
        "{who what} {aux_sg} the {adj_person} {nn1_human} wanna {vb_trans_animate} the {nn2_obj}?",
        "{when how why where} {aux_sg} the {adj_person} {nn1_human} wanna {vb_trans_animate} the {nn2_obj}?"),
      (("{vb_trans_animate} the {nn2_obj}", "{vb_trans} the {nn2_obj}"),)),
    T("wanna", "wanna_intransitive", _wanna_intrans, (
        "{who what} {aux_sg} {name} wanna {vb_intrans_animate}?",
        "{when how why where} {aux_sg} {name} wanna {vb_intrans_animate}?")),
]

PARADIGMS: list[str] = sorted({t.paradigm for t in TEMPLATES})
assert set(PARADIGMS) == set(POSH_CATEGORIES)



def fix_articles(tokens: Tokens) -> Tokens:
    vowels = set("aeiou")
    return [
        "an" if t == "a" and i + 1 < len(tokens) and tokens[i + 1][:1].lower() in vowels else t
        for i, t in enumerate(tokens)
    ]


def render(tokens: Tokens) -> str:
    """Tokens -> a sentence in corpus orthography (capitalised, attached punctuation)."""
    out = ""
    for t in tokens:
        if not out:
            out = t
        elif t in {"?", ".", ",", "!"} or t.startswith("'"):
            out += t
        else:
            out += " " + t
    return out[:1].upper() + out[1:]


def _remove_phrase(tokens: Tokens, phrase: Tokens) -> Tokens | None:
    n = len(phrase)
    for i in range(len(tokens) - n + 1):
        if tokens[i : i + n] == phrase:
            return tokens[:i] + tokens[i + n :]
    return None


def check_pair(bad: Tokens, good: Tokens, check: Check) -> str | None:
    """None when the pair differs exactly as its template intends, else why not."""
    if bad == good:
        return "bad and good are identical"
    kind = check[0]
    if kind == "sub":
        _, bad_word, good_word = check
        if len(bad) != len(good):
            return "a substitution pair must have equal lengths"
        diff = [i for i, (b, g) in enumerate(zip(bad, good)) if b != g]
        if len(diff) != 1:
            return f"expected one differing word, found {len(diff)}"
        i = diff[0]
        if (bad[i], good[i]) != (bad_word, good_word):
            return f"differing words are {bad[i]!r}/{good[i]!r}, expected {bad_word!r}/{good_word!r}"
        return None
    if kind == "move":
        if sorted(bad) != sorted(good):
            return "a movement pair must use the same words"
        b, g = list(bad), list(good)
        for phrase in check[1]:
            b2, g2 = _remove_phrase(b, list(phrase)), _remove_phrase(g, list(phrase))
            if b2 is None or g2 is None:
                return f"moved phrase {' '.join(phrase)!r} is missing"
            b, g = b2, g2
        if b != g:
            return "the sentences differ in more than the moved phrases"
        return None
    return f"unknown check {kind!r}"


def generate(
    lexicon: Lexicon,
    pairs_per_paradigm: int,
    seed: int,
    suite: str = "posh",
    paradigms: list[str] | None = None,
    max_fails: int = 2000,
) -> list[Pair]:
    """Generate the suite: pairs split evenly over each paradigm's templates.

    Deterministic for (lexicon, pairs_per_paradigm, seed). A sentence occurs at
    most once in the whole suite (as good or as bad), so no pair is duplicated
    and no sentence is scored twice under two verdicts.
    """
    paradigms = paradigms or PARADIGMS
    unknown = sorted(set(paradigms) - set(PARADIGMS))
    if unknown:
        raise PovstimError(f"unknown POSH-BENCH paradigm(s) {', '.join(unknown)}; known: {', '.join(PARADIGMS)}")
    seen: set[str] = set()
    out: list[Pair] = []
    for paradigm in sorted(paradigms):
        templates = [t for t in TEMPLATES if t.paradigm == paradigm]
        rng = random.Random(f"posh:{seed}:{paradigm}")
        quotas = [pairs_per_paradigm // len(templates)] * len(templates)
        for i in range(pairs_per_paradigm % len(templates)):
            quotas[i] += 1
        index = 0
        for template, quota in zip(templates, quotas):
            pick = _Pick(rng, lexicon, f"{paradigm}/{template.name}")
            made = fails = 0
            # Give up after many draws in a row without a new pair: the word
            # space of this template is exhausted.
            while made < quota and fails < max_fails:
                try:
                    bad_t, good_t, check = template.make(pick)
                except _Retry:
                    fails += 1
                    continue
                bad_t, good_t = fix_articles(bad_t), fix_articles(good_t)
                if check[0] == "sub":
                    check = ("sub",) + tuple(fix_articles([w])[0] for w in check[1:])
                why = check_pair(bad_t, good_t, check)
                if why is not None:  # a template bug, not bad luck: fail loudly
                    raise PovstimError(f"POSH-BENCH {paradigm}/{template.name}: {why}: {bad_t} / {good_t}")
                bad, good = render(bad_t), render(good_t)
                if bad in seen or good in seen:
                    fails += 1
                    continue
                fails = 0
                seen.update((bad, good))
                out.append(
                    Pair(
                        suite=suite,
                        paradigm=paradigm,
                        category=POSH_CATEGORIES[paradigm],
                        item_id=f"{paradigm}-{index:04d}",
                        good=good,
                        bad=bad,
                        extra={
                            "template": template.name,
                            "contrast": "substitution" if check[0] == "sub" else "movement",
                            "lexically_identical": sorted(bad_t) == sorted(good_t),
                        },
                    )
                )
                made += 1
                index += 1
            if made < quota:
                raise PovstimError(
                    f"POSH-BENCH {paradigm}/{template.name}: only {made} distinct pairs from the "
                    f"available words (need {quota}); raise top_k_words, use larger corpora or "
                    "lower pairs_per_paradigm"
                )
    return out


# --------------------------------------------------------------------------- can it be generated?

def generator_report(lex: Lexicon, corpora: list, top_k_words: int, pairs_per_paradigm: int | None = None,
                     seed: int = 1, paradigms: list[str] | None = None) -> dict:
    """Can POSH-BENCH be generated from ``corpora`` at ``top_k_words``, and which K would it need?

    ``classes`` is :func:`words.pool_report`; ``empty`` the open classes with no word (in every form its templates
    use) at this K; ``generates`` asks the generator itself, at the suite's ``pairs_per_paradigm``, ``seed`` and
    ``paradigms`` as the benchmark job will (None: one pair per template), and ``why`` says why it does not (a
    slot with no word, or a template that runs out of distinct pairs); ``k_needed`` is the smallest K above
    ``top_k_words`` at which it does (None: it already does, or no K does). A class can be empty while the suite
    generates: the templates draw some classes together (``noun.human_n`` with the other people) and each verb
    slot needs one or two of its forms, not all.
    ``lex``: the suite's word classes *without* a top-K restriction (``allowed`` None).
    """
    counts = [c if isinstance(c, Counter) else word_counts(c) for c in corpora]
    if not counts:
        raise PovstimError("a word-pool report needs at least one corpus")
    ranks = [word_ranks(c) for c in counts]
    classes = pool_report(lex, counts, top_k_words)
    settings = (pairs_per_paradigm, seed, paradigms)
    why = _generation_failure(lex, ranks, top_k_words, *settings)
    return {
        "top_k": int(top_k_words),
        "frequent_words": len(_allowed(ranks, top_k_words)),
        "classes": classes,
        "empty": sorted(c for c, row in classes.items() if row["available"] == 0),
        "generates": why is None,
        "why": why,
        "pairs_per_paradigm": pairs_per_paradigm,
        "k_needed": None if why is None else _k_needed(lex, ranks, top_k_words, *settings),
    }


def _allowed(ranks: list[dict[str, int]], k: int) -> set[str]:
    return set.intersection(*({w for w, r in rk.items() if r <= k} for rk in ranks))


def _generation_failure(lex: Lexicon, ranks: list[dict[str, int]], k: int, pairs_per_paradigm: int | None = None,
                        seed: int = 1, paradigms: list[str] | None = None) -> str | None:
    """Why POSH-BENCH cannot be generated at top-K ``k`` (None: it can): the generator itself, at
    ``pairs_per_paradigm`` (None: one pair per template, the cheapest check that every slot finds a word)."""
    per_paradigm = pairs_per_paradigm or max(Counter(t.paradigm for t in TEMPLATES).values())
    try:
        generate(dataclasses.replace(lex, allowed=_allowed(ranks, k)), per_paradigm, seed, paradigms=paradigms)
    except PovstimError as exc:
        if "no word of class" in str(exc) or "distinct pairs" in str(exc):
            return str(exc).split(" survives")[0].split("; raise")[0]
        raise
    return None


def _generates(lex: Lexicon, ranks: list[dict[str, int]], k: int, *settings) -> bool:
    return _generation_failure(lex, ranks, k, *settings) is None


def _k_needed(lex: Lexicon, ranks: list[dict[str, int]], above: int = 0, *settings) -> int | None:
    """The smallest top-K above ``above`` at which :func:`_generates` holds (binary search: more words never hurt;
    the K returned is one the generator was run at)."""
    hi = max(max(r.values()) for r in ranks)
    if hi <= above or not _generates(lex, ranks, hi, *settings):
        return None
    lo = above + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if _generates(lex, ranks, mid, *settings):
            hi = mid
        else:
            lo = mid + 1
    return lo
