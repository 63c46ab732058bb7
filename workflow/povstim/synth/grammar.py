"""A seeded probabilistic grammar of English with gold UD trees.

Two registers share one set of phrase builders and differ in which
constructions they draw and how heavily phrases are decorated:

* ``child`` (child-directed speech): short utterances, ~40% questions (yes/no
  and wh), imperatives, *wanna*, deictic and locative declaratives, some
  relative clauses on objects, that-complements, reflexives with one antecedent.
* ``adult`` (adult-written text): longer declaratives with complement clauses,
  subject / object / reduced relatives, participial modifiers, gerund adjunct
  clauses ("after seeing the girl"), possessives, whether-clauses, perception
  verbs with gerunds, coordination and few questions.

Direct positive evidence (DPE, see docs/corpus.md and CONVENTIONS) is produced
only by the ``dpe_*`` constructions, which the generator calls at exactly the
configured rate. Every other construction is built so it cannot satisfy a DPE
definition: main-clause subjects of questions never carry a relative clause,
and a reflexive is always preceded by exactly one animate noun phrase.
"""

from __future__ import annotations

import bisect
import random
from itertools import accumulate

from .. import lexicon as L
from .tree import Tok, attach, feats

VOWELS = frozenset("aeiou")
STATIVE = frozenset({"want", "need", "know", "believe", "like", "love", "remember", "admire", "miss", "hope"})
_POSS_PRON = tuple(p for p in L.PRON if p.nom != "it")
# stative verbs make odd progressives/gerunds ('watched him wanting the shoes')
ACTION_TRANS = tuple(v for v in L.VB_TRANS if v.base not in ("want", "need", "have"))
_THING_INTRANS = tuple(v for v in L.VB_INTRANS_ANIMATE + L.VB_TRANS if v.base in ("fall", "break"))


class NP:
    """A noun phrase: tokens in order, head token and agreement features."""

    __slots__ = ("toks", "head", "num", "person", "gender", "animate", "human")

    def __init__(self, toks, head, num, person, gender, animate, human):
        self.toks = toks
        self.head = head
        self.num = num
        self.person = person
        self.gender = gender
        self.animate = animate
        self.human = human


def _weighted(pairs):
    items = [p[0] for p in pairs]
    cum = list(accumulate(p[1] for p in pairs))
    return items, cum


class Grammar:
    def __init__(self, rng: random.Random, register: str):
        if register not in ("child", "adult"):
            raise ValueError(register)
        self.rng = rng
        self.register = register
        child = register == "child"
        keep = ("child", "both") if child else ("adult", "both")
        self.nn_m = [n for n in L.NN_M if n.register in keep]
        self.nn_f = [n for n in L.NN_F if n.register in keep]
        self.nn_n = [n for n in L.NN_HUMAN_N if n.register in keep]
        self.nn_human = self.nn_m + self.nn_f + self.nn_n
        self.nn_obj = [n for n in L.NN_OBJ if n.register in keep]
        self.names = list(L.NAMES_M + L.NAMES_F)
        self.p_adj = 0.12 if child else 0.4
        self.p_pp = 0.03 if child else 0.25
        self.p_that = 0.5 if child else 0.8
        self.p_pron_subj = 0.45 if child else 0.12
        # adult-written text decorates objects with relative clauses and PPs
        self.p_obj_rel = 0.04 if child else 0.3
        self.p_obj_pp = 0.0 if child else 0.2
        self.p_tail = 0.0 if child else 0.6
        self.p_subj_dec = 0.0 if child else 0.45
        self.depth = 0
        self.tenses = _weighted(
            [("pres", 35), ("past", 25), ("prog", 25), ("modal", 10), ("perf", 5)] if child
            else [("pres", 30), ("past", 45), ("prog", 8), ("modal", 9), ("perf", 8)]
        )
        self.subj_prons = _weighted(
            [("you", 40), ("I", 20), ("we", 10), ("he", 10), ("she", 10), ("they", 10)] if child
            else [("he", 30), ("she", 30), ("they", 25), ("we", 10), ("I", 5)]
        )

    # -- randomness -------------------------------------------------------------
    def pick(self, seq):
        return seq[int(self.rng.random() * len(seq))]

    def coin(self, p: float) -> bool:
        return self.rng.random() < p

    def wpick(self, table):
        items, cum = table
        return items[bisect.bisect_right(cum, self.rng.random() * cum[-1])]

    def tense(self) -> str:
        return self.wpick(self.tenses)

    # -- noun phrases -----------------------------------------------------------
    def _det(self, num: str, noun_tok: Tok, allow_poss: bool) -> Tok | None:
        r = self.rng.random()
        if allow_poss and r < 0.1:
            p = self.pick(_POSS_PRON if self.register == "adult" else L.PRON[:2])
            d = Tok(p.poss, p.poss, "PRON",
                    feats(Number=p.number, Person=str(p.person), Poss="Yes", PronType="Prs",
                          Gender={"m": "Masc", "f": "Fem", "n": "Neut"}.get(p.gender or "")))
            return attach(d, noun_tok, "nmod:poss")
        if r < 0.7:
            return attach(Tok("the", "the", "DET", feats(Definite="Def", PronType="Art")), noun_tok, "det")
        if num == "Sing" and r < 0.92:
            return attach(Tok("a", "a", "DET", feats(Definite="Ind", PronType="Art")), noun_tok, "det")
        if num == "Sing":
            w = self.pick(("this", "that") if self.register == "child" else ("this", "that", "every"))
        else:
            w = self.pick(("these", "those", "some"))
        pt = "Ind" if w in ("some", "every") else "Dem"
        return attach(Tok(w, w, "DET", feats(Number=num if pt == "Dem" else None, PronType=pt)), noun_tok, "det")

    def np_noun(self, noun: L.Noun, num: str | None = None, det: bool = True, adj: float | None = None,
                allow_poss: bool = True) -> NP:
        if num is None:
            num = "Plur" if self.coin(0.2) else "Sing"
        head = Tok(noun.form(num), noun.sg, "NOUN",
                   feats(Animacy="Anim" if noun.animate else "Inan", Number=num))
        toks = [head]
        if self.coin(self.p_adj if adj is None else adj):
            a = self.pick(L.ADJ_PERSON if noun.animate else L.ADJ_THING)
            toks.insert(0, attach(Tok(a.form, a.form, "ADJ", feats(Degree="Pos")), head, "amod"))
        if det:
            d = self._det(num, head, allow_poss)
            if d is not None:
                toks.insert(0, d)
        if toks[0].form == "a" and toks[1].form[0] in VOWELS:
            toks[0].form = "an"
        gender = noun.gender
        if gender == "n" and noun.human:
            gender = "m" if self.coin(0.5) else "f"
        return NP(toks, head, num, 3, gender, noun.animate, noun.human)

    def np_name(self, name: L.Name | None = None) -> NP:
        name = name or self.pick(self.names)
        t = Tok(name.form, name.form, "PROPN", feats(Animacy="Anim", Number="Sing"))
        return NP([t], t, "Sing", 3, name.gender, True, True)

    def np_pron(self, nom: str, case: str = "Nom") -> NP:
        p = L.PRON_BY_NOM[nom]
        form = p.nom if case == "Nom" else p.acc
        t = Tok(form, p.nom, "PRON",
                feats(Animacy="Anim" if p.animate else None, Case=case, Number=p.number,
                      Person=str(p.person), PronType="Prs",
                      Gender={"m": "Masc", "f": "Fem", "n": "Neut"}.get(p.gender or "")))
        gender = p.gender or ("m" if self.coin(0.5) else "f")
        return NP([t], t, p.number, p.person, gender, p.animate, p.animate)

    def np_human(self, allow_poss: bool = True, adj: float | None = None) -> NP:
        return self.np_noun(self.pick(self.nn_human), allow_poss=allow_poss, adj=adj)

    def np_animate(self, case: str = "Nom", pron: float | None = None, allow_poss: bool = True,
                   name: float = 0.2) -> NP:
        """An animate NP: pronoun, name, human noun or animal."""
        r = self.rng.random()
        p_pron = self.p_pron_subj if pron is None else pron
        if r < p_pron:
            nom = self.wpick(self.subj_prons)
            if case == "Acc" and nom == "I":
                nom = "you"
            return self.np_pron(nom, case)
        if r < p_pron + name:
            return self.np_name()
        if self.coin(0.75):
            return self.np_human(allow_poss=allow_poss)
        return self.np_noun(self.pick(L.NN_ANIMAL), allow_poss=allow_poss)

    def np_thing(self, allow_poss: bool = True, pp: float = 0.0, pron: float = 0.0) -> NP:
        if pron and self.coin(pron):
            return self.np_pron("it", "Acc")
        np = self.np_noun(self.pick(self.nn_obj), allow_poss=allow_poss)
        if pp and self.coin(pp):
            self.add_pp(np, loc=True)
        return np

    def np_place(self) -> NP:
        return self.np_noun(self.pick(L.NN_PLACE), num="Sing", adj=0.05, allow_poss=False)

    def pp(self, head: Tok, deprel: str, prep: str | None = None, obj: NP | None = None) -> list[Tok]:
        if obj is None:
            obj = self.np_place()
            prep = prep or self.pick(("in", "near", "behind", "in"))
        prep = prep or self.pick(L.PREP_LOC)
        attach(obj.head, head, deprel)
        return [attach(Tok(prep, prep, "ADP"), obj.head, "case")] + obj.toks

    def add_pp(self, np: NP, loc: bool = False) -> NP:
        """'the boy with the hat' / 'the box on the table' (nmod; the PP object is a thing)."""
        if loc:
            np.toks += self.pp(np.head, "nmod", self.pick(("on", "in", "under", "near")),
                               self.np_noun(self.pick(L.NN_OBJ), num="Sing", adj=0.0, allow_poss=False))
        else:
            np.toks += self.pp(np.head, "nmod", "with",
                               self.np_noun(self.pick(L.NN_OBJ), num="Sing", adj=0.0, allow_poss=False))
        return np

    def np_poss(self, possessed: L.Noun | None = None, possessor: NP | None = None) -> NP:
        """'Mary's dad', 'the boy's ball' (possessor: nmod:poss; 's: case)."""
        owner = possessor or (self.np_name() if self.coin(0.6) else
                              self.np_noun(self.pick(self.nn_human), num="Sing", adj=0.0, allow_poss=False))
        noun = possessed or (self.pick(self.nn_human) if self.coin(0.5) else self.pick(self.nn_obj))
        np = self.np_noun(noun, det=False, adj=0.1 if self.register == "adult" else 0.0)
        attach(owner.head, np.head, "nmod:poss")
        s = attach(Tok("'s", "'s", "PART"), owner.head, "case")
        np.toks = owner.toks + [s] + np.toks
        return np

    # -- verbs ------------------------------------------------------------------
    def _aux(self, form: str, lemma: str, **kw) -> Tok:
        return Tok(form, lemma, "AUX", feats(**kw))

    def be(self, np: NP, past: bool) -> Tok:
        if past:
            form = "was" if np.num == "Sing" and np.person != 2 else "were"
            return self._aux(form, "be", Mood="Ind", Number="Sing" if form == "was" else None,
                             Tense="Past", VerbForm="Fin")
        if np.num == "Sing" and np.person == 1:
            return self._aux("am", "be", Mood="Ind", Number="Sing", Person="1", Tense="Pres", VerbForm="Fin")
        if np.num == "Sing" and np.person == 3:
            return self._aux("is", "be", Mood="Ind", Number="Sing", Person="3", Tense="Pres", VerbForm="Fin")
        return self._aux("are", "be", Mood="Ind", Tense="Pres", VerbForm="Fin")

    def do(self, np: NP, past: bool) -> Tok:
        if past:
            return self._aux("did", "do", Mood="Ind", Tense="Past", VerbForm="Fin")
        if np.num == "Sing" and np.person == 3:
            return self._aux("does", "do", Mood="Ind", Number="Sing", Person="3", Tense="Pres", VerbForm="Fin")
        return self._aux("do", "do", Mood="Ind", Tense="Pres", VerbForm="Fin")

    def verb(self, v: L.Verb, subj: NP | None, tense: str, question: bool) -> tuple[list[Tok], Tok]:
        """Inflect ``v`` for ``subj`` and ``tense``; return (auxiliaries, main verb). Auxiliaries
        are attached to the main verb; in a question the first one is fronted by the caller."""
        sg3 = subj is not None and subj.num == "Sing" and subj.person == 3
        if tense in ("prog", "pastprog") and v.base in STATIVE:
            tense = "pres" if tense == "prog" else "past"
        if tense in ("pres", "past") and not question:
            if tense == "past":
                return [], Tok(v.past, v.base, "VERB", feats(Mood="Ind", Tense="Past", VerbForm="Fin"))
            if sg3:
                return [], Tok(v.s3, v.base, "VERB",
                               feats(Mood="Ind", Number="Sing", Person="3", Tense="Pres", VerbForm="Fin"))
            return [], Tok(v.base, v.base, "VERB", feats(Mood="Ind", Tense="Pres", VerbForm="Fin"))
        if tense in ("pres", "past"):
            aux = self.do(subj, tense == "past")
            main = Tok(v.base, v.base, "VERB", feats(VerbForm="Inf"))
        elif tense in ("prog", "pastprog"):
            aux = self.be(subj, tense == "pastprog")
            main = Tok(v.ger, v.base, "VERB", feats(Tense="Pres", VerbForm="Part"))
        elif tense == "perf":
            form = "has" if sg3 else "have"
            aux = self._aux(form, "have", Mood="Ind", Number="Sing" if sg3 else None,
                            Person="3" if sg3 else None, Tense="Pres", VerbForm="Fin")
            main = Tok(v.pp, v.base, "VERB", feats(Tense="Past", VerbForm="Part"))
        else:  # modal
            m = self.pick(L.MODAL)
            aux = self._aux(m.form, m.lemma, VerbForm="Fin")
            main = Tok(v.base, v.base, "VERB", feats(VerbForm="Inf"))
        attach(aux, main, "aux")
        return [aux], main

    def gerund(self, v: L.Verb, participle: bool = False) -> Tok:
        return Tok(v.ger, v.base, "VERB", feats(Tense="Pres", VerbForm="Part") if participle else feats(VerbForm="Ger"))

    # -- clauses ----------------------------------------------------------------
    @staticmethod
    def order(subj: NP | None, auxes: list[Tok], pred: list[Tok], question: bool,
              front: list[Tok] | None = None) -> list[Tok]:
        front = front or []
        if subj is None:
            return front + auxes + pred
        if question and auxes:
            return front + auxes[:1] + subj.toks + auxes[1:] + pred
        return front + subj.toks + auxes + pred

    def vp(self, subj: NP, frame: str, tense: str, question: bool = False, gap: bool = False,
           obj_pp: float = 0.0) -> tuple[list[Tok], list[Tok], Tok, Tok | None]:
        """A verb phrase for ``subj``: (auxes, predicate tokens, head, gap host).

        With ``gap`` the object is left out and the verb that would have taken
        it is returned as gap host (the caller attaches a wh-word or
        relativizer to it as ``obj``)."""
        if frame == "intrans":
            auxes, v = self.verb(self.pick(L.VB_INTRANS_ANIMATE), subj, tense, question)
            pred = [v]
            if self.coin(self.p_pp):
                pred += self.pp(v, "obl")
            return auxes, pred, v, None
        if frame in ("trans_anim", "trans_obj"):
            lex = L.VB_TRANS_ANIMATE if frame == "trans_anim" else L.VB_TRANS
            auxes, v = self.verb(self.pick(lex), subj, tense, question)
            if gap:
                return auxes, [v], v, v
            if frame == "trans_anim":
                obj = self.np_animate("Acc", pron=0.15 if self.register == "child" else 0.08)
            else:
                obj = self.np_thing(pp=obj_pp or self.p_obj_pp, pron=0.12 if self.register == "child" else 0.0)
            if self.depth == 0 and obj.head.upos == "NOUN" and self.coin(self.p_obj_rel):
                self.depth += 1
                self.relcl(obj, self.pick(("subj", "obj", "red")))
                self.depth -= 1
            attach(obj.head, v, "obj")
            pred = [v] + obj.toks
            if self.coin(self.p_pp * 0.5):
                pred += self.pp(v, "obl")
            return auxes, pred, v, None
        if frame == "intrans_thing":  # 'the cup broke', 'the ball fell'
            auxes, v = self.verb(self.pick(_THING_INTRANS), subj, tense, question)
            return auxes, [v], v, None
        raise ValueError(frame)

    def clause(self, subj: NP, frame: str, tense: str | None = None, question: bool = False,
               gap: bool = False) -> tuple[list[Tok], Tok, Tok | None]:
        """A finite clause; returns (tokens, head, gap host)."""
        tense = tense or self.tense()
        if frame == "cop":
            return self.copula(subj, question=question) + (None,)
        auxes, pred, head, host = self.vp(subj, frame, tense, question, gap)
        attach(subj.head, head, "nsubj")
        return self.order(subj, auxes, pred, question), head, host

    def copula(self, subj: NP, question: bool = False, past: bool | None = None,
               kind: str | None = None) -> tuple[list[Tok], Tok]:
        """'the ball is red' / 'the cat is on the table' / 'Tom is a doctor' (predicate heads)."""
        cop = self.be(subj, self.coin(0.3) if past is None else past)
        kind = kind or ("adj" if self.coin(0.65) else "loc")
        if kind == "adj":
            a = self.pick(L.ADJ_PERSON if subj.animate else L.ADJ_THING)
            head = Tok(a.form, a.form, "ADJ", feats(Degree="Pos"))
            pred = [head]
        else:
            obj = self.np_place() if self.coin(0.5) else self.np_noun(self.pick(L.NN_OBJ), num="Sing", adj=0.0,
                                                                      allow_poss=False)
            head = obj.head
            prep = self.pick(("in", "on", "under", "near")) if obj.head.lemma not in {n.sg for n in L.NN_PLACE} \
                else self.pick(("in", "near"))
            pred = [attach(Tok(prep, prep, "ADP"), head, "case")] + obj.toks
        cop.upos = "AUX"
        attach(cop, head, "cop")
        attach(subj.head, head, "nsubj")
        return self.order(subj, [cop], pred, question), head

    # -- relative clauses -------------------------------------------------------
    def relcl(self, np: NP, kind: str, that: bool | None = None) -> NP:
        """Append a relative clause to ``np``: kind 'subj' (who is smiling), 'obj'
        (that the girl saw) or 'red' (the girl saw, no relativizer). acl:relcl."""
        if kind == "subj":
            rel = self._relativizer(np, that)
            if np.animate:
                frame = self.pick(("intrans", "trans_obj", "trans_anim"))
                auxes, pred, head, _ = self.vp(np, frame, self.wpick(self.tenses) if self.coin(0.5) else "prog")
                attach(rel, head, "nsubj")
                toks = [rel] + auxes + pred
            else:
                toks, head = self.copula(np, past=False)
                # copula() attached np's own head as nsubj: the relativizer is the subject instead
                np.head.head, np.head.deprel = None, "_"
                attach(rel, head, "nsubj")
                toks = [rel] + toks[len(np.toks):]
        else:
            subj = self.np_animate("Nom", pron=0.3 if self.register == "child" else 0.1, name=0.2)
            tense = self.pick(("past", "pres", "prog", "past")) if self.register == "child" else \
                self.pick(("past", "past", "pres", "perf"))
            auxes, v = self.verb(self.pick(L.VB_TRANS_ANIMATE if np.animate else L.VB_TRANS), subj, tense, False)
            head = v
            attach(subj.head, v, "nsubj")
            toks = subj.toks + auxes + [v]
            if kind == "obj":
                rel = self._relativizer(np, that)
                attach(rel, v, "obj")
                toks = [rel] + toks
        attach(head, np.head, "acl:relcl")
        np.toks = np.toks + toks
        return np

    def _relativizer(self, np: NP, that: bool | None) -> Tok:
        if that is None:
            that = self.coin(0.5)
        if that:
            w = "that"
        elif np.human:
            w = "who"
        else:
            w = "which" if self.register == "adult" else "that"
        return Tok(w, w, "PRON", feats(PronType="Rel"))

    def subj_decl(self, pron: float | None = None) -> NP:
        """Subject of a DECLARATIVE clause: in the adult register often with a PP or a
        relative clause (never used in questions, where it would be DPE)."""
        subj = self.np_animate(pron=pron)
        if subj.head.upos == "NOUN" and self.depth == 0 and self.coin(self.p_subj_dec):
            if self.coin(0.4):
                self.add_pp(subj, loc=self.coin(0.5))
            else:
                self.depth += 1
                self.relcl(subj, self.pick(("subj", "obj", "red")))
                self.depth -= 1
        return subj

    def tail(self, head: Tok) -> list[Tok]:
        """Adult register: an optional trailing PP or gerund adjunct on a main clause."""
        if not self.coin(self.p_tail):
            return []
        if self.coin(0.5):
            return self.pp(head, "obl")
        toks, g = self.adjunct_gerund()
        attach(g, head, "advcl")
        return toks

    def participial(self, np: NP) -> NP:
        """Reduced participial relative 'the woman sitting on the bench' (acl)."""
        if self.coin(0.5):
            v = self.gerund(self.pick(L.VB_INTRANS_ANIMATE), participle=True)
            toks = [v] + self.pp(v, "obl")
        else:
            v = self.gerund(self.pick(ACTION_TRANS), participle=True)
            obj = self.np_thing(allow_poss=False)
            attach(obj.head, v, "obj")
            toks = [v] + obj.toks
        attach(v, np.head, "acl")
        np.toks = np.toks + toks
        return np

    # -- clause embedding -------------------------------------------------------
    def comp(self, head: Tok, mark: str | None, subj: NP | None = None, frame: str | None = None,
             gap: bool = False) -> tuple[list[Tok], Tok | None]:
        """Embedded finite clause attached to ``head`` as ccomp, optionally marked
        (that / whether). Returns (tokens, gap host)."""
        subj = subj or self.np_animate("Nom", pron=0.2 if self.register == "child" else 0.1, allow_poss=False)
        frame = frame or ("trans_obj" if gap else self.pick(("intrans", "trans_obj", "trans_anim", "cop")))
        if gap and frame == "cop":
            frame = "trans_obj"
        toks, ehead, host = self.clause(subj, frame, gap=gap)
        attach(ehead, head, "ccomp")
        if mark:
            m = attach(Tok(mark, mark, "SCONJ"), ehead, "mark")
            toks = [m] + toks
        return toks, host

    def adjunct_gerund(self, prep: str | None = None) -> tuple[list[Tok], Tok]:
        """'after seeing the girl' (SCONJ mark + gerund, advcl). Returns (tokens, gerund)."""
        prep = prep or self.pick(L.PREP_ADJUNCT)
        if self.coin(0.5):
            v = self.gerund(self.pick(L.VB_TRANS_ANIMATE))
            obj = self.np_animate("Acc", pron=0.0, allow_poss=False)
        else:
            v = self.gerund(self.pick(ACTION_TRANS))
            obj = self.np_thing(allow_poss=False)
        attach(obj.head, v, "obj")
        m = attach(Tok(prep, prep, "SCONJ"), v, "mark")
        return [m, v] + obj.toks, v

    def reflexive(self, antecedent: NP) -> Tok:
        """The reflexive agreeing with ``antecedent`` (gender, number, person)."""
        if antecedent.num == "Plur":
            form = "ourselves" if antecedent.person == 1 else "themselves"
        elif antecedent.person == 1:
            form = "myself"
        elif antecedent.person == 2:
            form = "yourself"
        elif antecedent.gender == "n":
            form = "itself"
        else:
            form = "himself" if antecedent.gender == "m" else "herself"
        g = {"himself": "Masc", "herself": "Fem", "itself": "Neut"}.get(form)
        person = {"myself": "1", "ourselves": "1", "yourself": "2"}.get(form, "3")
        num = "Plur" if form in ("ourselves", "themselves") else "Sing"
        return Tok(form, form, "PRON", feats(Case="Acc", Gender=g, Number=num, Person=person,
                                             PronType="Prs", Reflex="Yes"))
