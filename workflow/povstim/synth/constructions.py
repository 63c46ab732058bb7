"""The constructions of each register and the DPE constructions.

A construction is a method ``c_<name>(self) -> (tokens, root, end)`` where
``end`` is the final punctuation mark. ``CHILD`` and ``ADULT`` give each
register's constructions with their weights; ``DPE`` the constructions that
produce direct positive evidence for each phenomenon.
"""

from __future__ import annotations

from .. import lexicon as L
from .grammar import ACTION_TRANS, NP, Grammar
from .tree import Tok, attach, feats


def _int(w: str) -> Tok:
    upos = "PRON" if w in ("who", "what") else "ADV"
    return Tok(w, w, upos, feats(PronType="Int"))


class Constructions(Grammar):
    # ----- declaratives --------------------------------------------------------
    def c_decl_intrans(self):
        toks, head, _ = self.clause(self.subj_decl(), "intrans")
        return toks + self.tail(head), head, "."

    def c_decl_trans(self):
        frame = "trans_obj" if self.coin(0.6) else "trans_anim"
        toks, head, _ = self.clause(self.subj_decl(), frame)
        return toks + self.tail(head), head, "."

    def c_decl_cop(self):
        if self.coin(0.6):
            subj = self.np_animate()
        elif self.register == "child" and self.coin(0.3):
            subj = self.np_pron("it")
        else:
            subj = self.np_thing()
        toks, head = self.copula(subj)
        return toks, head, "."

    def c_deictic(self):
        """'That is a dog.' / 'This is my ball.'"""
        w = self.pick(("that", "this"))
        subj = Tok(w, w, "PRON", feats(Number="Sing", PronType="Dem"))
        noun = self.pick(self.nn_obj + list(L.NN_ANIMAL) + self.nn_human)
        pred = self.np_noun(noun, num="Sing", det=False)
        d = self.pick(("the", "a", "a", "my", "your"))
        if d in ("my", "your"):
            dt = attach(Tok(d, d, "PRON", feats(Number="Sing", Person="1" if d == "my" else "2", Poss="Yes",
                                                 PronType="Prs")), pred.head, "nmod:poss")
        else:
            dt = attach(Tok(d, d, "DET", feats(Definite="Def" if d == "the" else "Ind", PronType="Art")),
                        pred.head, "det")
            if d == "a" and pred.toks[0].form[0] in "aeiou":
                dt.form = "an"
        pred.toks.insert(0, dt)
        cop = attach(self.be(NP([subj], subj, "Sing", 3, "n", False, False), False), pred.head, "cop")
        attach(subj, pred.head, "nsubj")
        return [subj, cop] + pred.toks, pred.head, "."

    def c_ccomp(self):
        """'I think (that) the dog is hungry.'"""
        subj = self.subj_decl(pron=0.7 if self.register == "child" else 0.15)
        auxes, v = self.verb(self.pick(L.VB_STATE), subj, self.pick(("pres", "past")), False)
        attach(subj.head, v, "nsubj")
        emb, _ = self.comp(v, "that" if self.coin(self.p_that) else None)
        return subj.toks + auxes + [v] + emb + self.tail(v), v, "."

    def c_whether(self):
        """'The doctor wondered whether the boy had left.' / '... asked who Mary saw.'"""
        subj = self.np_animate(pron=0.3 if self.register == "child" else 0.1)
        auxes, v = self.verb(self.pick(L.VB_QUESTION), subj, self.pick(("past", "pres", "past")), False)
        attach(subj.head, v, "nsubj")
        if self.coin(0.6):
            emb, _ = self.comp(v, "whether")
        else:
            # embedded wh-question with an object gap: indirect evidence for wh-islands
            wh = _int("what") if self.coin(0.5) else _int("who")
            emb, host = self.comp(v, None, frame="trans_obj" if wh.form == "what" else "trans_anim", gap=True)
            attach(wh, host, "obj")
            emb = [wh] + emb
        return subj.toks + auxes + [v] + emb, v, "."

    def c_percep(self):
        """'I see the dog running.' / 'The teacher heard the girl singing in the garden.'"""
        subj = self.subj_decl()
        auxes, v = self.verb(self.pick(L.VB_PERCEP), subj, self.pick(("pres", "past", "past")), False)
        attach(subj.head, v, "nsubj")
        obj = self.np_animate("Acc", pron=0.1, allow_poss=True)
        attach(obj.head, v, "obj")
        if self.coin(0.6):
            g = self.gerund(self.pick(L.VB_INTRANS_ANIMATE), participle=True)
            tail = [g]
            if self.coin(self.p_pp * 2):
                tail += self.pp(g, "obl")
        else:
            g = self.gerund(self.pick(ACTION_TRANS), participle=True)
            o = self.np_thing(allow_poss=False)
            attach(o.head, g, "obj")
            tail = [g] + o.toks
        attach(g, v, "xcomp")
        return subj.toks + auxes + [v] + obj.toks + tail, v, "."

    def c_objrel(self):
        """'I see the boy who is smiling.' / 'Mary found the ball that Tom threw.'"""
        subj = self.np_animate()
        anim = self.coin(0.5)
        auxes, v = self.verb(self.pick(L.VB_TRANS_ANIMATE if anim else L.VB_TRANS), subj, self.tense(), False)
        attach(subj.head, v, "nsubj")
        obj = self.np_animate("Acc", pron=0.0) if anim else self.np_thing()
        if obj.head.upos == "PROPN":
            obj = self.np_human()
        self.relcl(obj, self.pick(("subj", "obj", "red")))
        attach(obj.head, v, "obj")
        return subj.toks + auxes + [v] + obj.toks, v, "."

    def c_subjrel(self):
        """Declarative with a relative clause on the subject (not DPE: not a question)."""
        subj = self.np_human() if self.coin(0.7) else self.np_noun(self.pick(L.NN_ANIMAL + tuple(self.nn_obj)))
        self.relcl(subj, self.pick(("subj", "obj", "red")))
        if self.coin(0.4):
            toks, head = self.copula(subj)
        else:
            toks, head, _ = self.clause(subj, "intrans" if subj.animate and self.coin(0.4) else
                                        ("trans_obj" if subj.animate else "intrans_thing"))
            toks += self.tail(head)
        return toks, head, "."

    def c_participial(self):
        """'The woman sitting on the bench read a book.' (acl, adult)."""
        subj = self.np_human()
        self.participial(subj)
        toks, head, _ = self.clause(subj, self.pick(("trans_obj", "trans_anim", "intrans")))
        return toks + self.tail(head), head, "."

    def c_refl(self):
        """A reflexive with exactly one animate NP before it: 'The boy hurt himself.'"""
        subj = self.np_animate(allow_poss=False, pron=0.4 if self.register == "child" else 0.1)
        if subj.head.upos == "NOUN" and self.coin(0.25):
            self.add_pp(subj)  # 'the boy with the hat': a noun but no animate NP
        question = self.register == "child" and self.coin(0.25)
        percep = self.coin(0.25)
        lex = L.VB_PERCEP if percep else L.VB_REFL
        auxes, v = self.verb(self.pick(lex), subj, self.pick(("past", "past", "pres", "prog")), question)
        attach(subj.head, v, "nsubj")
        r = attach(self.reflexive(subj), v, "obj")
        pred = [v, r]
        if percep:  # 'The girl saw herself reading a book.' (POSH binding-locality frame, one antecedent)
            g = attach(self.gerund(self.pick(ACTION_TRANS), participle=True), v, "xcomp")
            o = self.np_thing(allow_poss=False)
            attach(o.head, g, "obj")
            pred += [g] + o.toks
        return self.order(subj, auxes, pred, question), v, "?" if question else "."

    def c_wanna(self):
        """'I wanna go.' / 'We wanna eat the cake.'"""
        subj = self.np_pron(self.pick(("I", "I", "we", "you", "they")))
        w = Tok("wanna", "want", "VERB", feats(Mood="Ind", Tense="Pres", VerbForm="Fin"))
        attach(subj.head, w, "nsubj")
        tail = self._wanna_vp(w, gap=False)
        return subj.toks + [w] + tail, w, "."

    def _wanna_vp(self, w: Tok, gap: bool, trans: bool | None = None) -> list[Tok]:
        if trans is None:
            trans = self.coin(0.5)
        if trans:
            v = Tok((vb := self.pick(L.VB_WANNA_TRANS)).base, vb.base, "VERB", feats(VerbForm="Inf"))
            attach(v, w, "xcomp")
            if gap:
                return [v]
            o = self.np_thing()
            attach(o.head, v, "obj")
            return [v] + o.toks
        vb = self.pick(L.VB_WANNA_INTRANS)
        v = attach(Tok(vb.base, vb.base, "VERB", feats(VerbForm="Inf")), w, "xcomp")
        return [v]

    def c_want_to(self):
        """'The boy wants to read the book.' (want + to, the uncontracted form)."""
        subj = self.np_animate()
        auxes, w = self.verb(L.VB_TRANS[8], subj, self.pick(("pres", "past")), False)  # want
        attach(subj.head, w, "nsubj")
        tail = self._wanna_vp(w, gap=False)
        to = attach(Tok("to", "to", "PART"), tail[0], "mark")
        return subj.toks + auxes + [w, to] + tail, w, "."

    def c_poss(self):
        """'Mary's dad is tall.' / 'I like the boy's ball.'"""
        if self.coin(0.5):
            subj = self.np_poss()
            if self.coin(0.5):
                toks, head = self.copula(subj)
            else:
                toks, head, _ = self.clause(subj, "trans_obj" if subj.animate else "intrans_thing")
            return toks, head, "."
        subj = self.np_animate(pron=self.p_pron_subj)
        auxes, v = self.verb(self.pick(L.VB_TRANS), subj, self.tense(), False)
        attach(subj.head, v, "nsubj")
        obj = self.np_poss(possessed=self.pick(self.nn_obj))
        attach(obj.head, v, "obj")
        return subj.toks + auxes + [v] + obj.toks, v, "."

    def c_adjunct(self):
        """'After seeing the girl, the boy left.' / 'The man read a book before leaving the house.'"""
        adj, g = self.adjunct_gerund()
        subj = self.subj_decl(pron=0.3 if self.register == "child" else 0.15)
        toks, head, _ = self.clause(subj, self.pick(("trans_obj", "intrans", "trans_anim")))
        attach(g, head, "advcl")
        if self.coin(0.4):
            comma = attach(Tok(",", ",", "PUNCT"), g, "punct")
            return adj + [comma] + toks, head, "."
        return toks + adj, head, "."

    def c_adjunct_fin(self):
        """'While the children played, the mother read a newspaper.'"""
        m = self.pick(("while", "after", "before", "because", "when"))
        toks1, h1, _ = self.clause(self.np_animate(), self.pick(("intrans", "trans_obj")))
        toks2, h2, _ = self.clause(self.np_animate(), self.pick(("trans_obj", "trans_anim", "intrans")))
        attach(h1, h2, "advcl")
        mark = attach(Tok(m, m, "SCONJ"), h1, "mark")
        if self.coin(0.5):
            comma = attach(Tok(",", ",", "PUNCT"), h1, "punct")
            return [mark] + toks1 + [comma] + toks2, h2, "."
        return toks2 + [mark] + toks1, h2, "."

    def c_coord(self):
        """'The man opened the door and the dog ran outside.'"""
        toks1, h1, _ = self.clause(self.subj_decl(), self.pick(("trans_obj", "trans_anim")))
        toks2, h2, _ = self.clause(self.np_animate(), self.pick(("intrans", "trans_obj")))
        attach(h2, h1, "conj")
        cc = attach(Tok("and", "and", "CCONJ"), h2, "cc")
        return toks1 + [cc] + toks2 + self.tail(h2), h1, "."

    # ----- questions -----------------------------------------------------------
    def c_ynq(self):
        """'Can you see the bird?' / 'Did the baby eat the apple?'"""
        subj = self.np_animate()
        toks, head, _ = self.clause(subj, self.pick(("intrans", "trans_obj", "trans_anim")), question=True)
        return toks, head, "?"

    def c_ynq_cop(self):
        """'Is the dog happy?' / 'Are you hungry?'"""
        subj = self.np_animate() if self.coin(0.6) else self.np_thing()
        toks, head = self.copula(subj, question=True)
        return toks, head, "?"

    def c_whq_obj(self):
        """'What did the boy eat?' / 'Who did you see?' (object gap)."""
        wh = _int("what") if self.coin(0.6) else _int("who")
        subj = self.np_animate()
        toks, head, host = self.clause(subj, "trans_obj" if wh.form == "what" else "trans_anim",
                                       question=True, gap=True)
        attach(wh, host, "obj")
        toks = [wh] + toks
        if self.coin(0.12):  # 'Who did the boy call before meeting the girl?' (gap outside the adjunct)
            adj, g = self.adjunct_gerund()
            attach(g, head, "advcl")
            toks += adj
        return toks, head, "?"

    def c_want_q(self):
        """'What do you want to eat?' / 'Who do you want to win?' — *want to*, uncontracted, also
        where *wanna* is impossible (the wh-word is the subject of the infinitive)."""
        subj = self.np_pron("you") if self.coin(0.7) else self.np_animate(pron=0.0)
        do = self.do(subj, self.coin(0.2))
        w = Tok("want", "want", "VERB", feats(VerbForm="Inf"))
        attach(do, w, "aux")
        attach(subj.head, w, "nsubj")
        r = self.rng.random()
        if r < 0.35:  # object gap
            tail = self._wanna_vp(w, gap=True, trans=True)
            wh = attach(_int("what"), tail[0], "obj")
        elif r < 0.6:  # subject of the infinitive: 'Who do you want to win?'
            wh = attach(_int("who"), w, "obj")
            tail = self._wanna_vp(w, gap=False, trans=False)
        else:
            wh = attach(_int(self.pick(L.WH_ADVERB)), w, "advmod")
            tail = self._wanna_vp(w, gap=False)
        to = attach(Tok("to", "to", "PART"), tail[0], "mark")
        return [wh, do] + subj.toks + [w, to] + tail, w, "?"

    def c_whq_subj(self):
        """'Who ate the cookie?' / 'Who is crying?'"""
        wh = _int("who")
        subj = NP([wh], wh, "Sing", 3, "m", True, True)
        toks, head, _ = self.clause(subj, self.pick(("intrans", "trans_obj", "trans_anim")))
        return toks, head, "?"

    def c_whq_adv(self):
        """'Where is the ball?' / 'Why is the baby crying?'"""
        if self.coin(0.4):
            subj = self.np_animate() if self.coin(0.5) else self.np_thing()
            wh = _int("where")
            cop = attach(self.be(subj, self.coin(0.2)), wh, "cop")
            attach(subj.head, wh, "nsubj")
            return [wh, cop] + subj.toks, wh, "?"
        wh = _int(self.pick(L.WH_ADVERB))
        toks, head, _ = self.clause(self.np_animate(), self.pick(("intrans", "trans_obj", "trans_anim")),
                                    question=True)
        attach(wh, head, "advmod")
        return [wh] + toks, head, "?"

    def c_whq_long(self):
        """'What do you think (that) the dog ate?' / 'Who did Mary say that Tom saw?'"""
        wh = _int("what") if self.coin(0.5) else _int("who")
        subj = self.np_animate(pron=0.6 if self.register == "child" else 0.2)
        auxes, v = self.verb(self.pick(L.VB_STATE[:3]), subj, self.pick(("pres", "past")), True)
        attach(subj.head, v, "nsubj")
        emb, host = self.comp(v, "that" if self.coin(0.3) else None,
                              frame="trans_obj" if wh.form == "what" else "trans_anim", gap=True)
        attach(wh, host, "obj")
        return [wh] + self.order(subj, auxes, [v] + emb, True), v, "?"

    def c_wanna_q(self):
        """'Do you wanna play?' / 'What do you wanna eat?' / 'Where does Tom wanna go?'"""
        subj = self.np_pron("you") if self.coin(0.7) else self.np_animate(pron=0.0)
        do = self.do(subj, self.coin(0.15))
        w = Tok("wanna", "want", "VERB", feats(VerbForm="Inf"))
        attach(do, w, "aux")
        attach(subj.head, w, "nsubj")
        r = self.rng.random()
        if r < 0.45:  # yes/no
            tail = self._wanna_vp(w, gap=False)
            return [do] + subj.toks + [w] + tail, w, "?"
        if r < 0.65:  # object gap after a transitive: 'What do you wanna eat?'
            tail = self._wanna_vp(w, gap=True, trans=True)
            wh = attach(_int("what"), tail[0], "obj")
            return [wh, do] + subj.toks + [w] + tail, w, "?"
        if r < 0.75:  # 'Who do you wanna see?' (who is the object of the lower verb, so wanna is fine)
            vb = self.pick(L.VB_TRANS_ANIMATE)
            v = attach(Tok(vb.base, vb.base, "VERB", feats(VerbForm="Inf")), w, "xcomp")
            wh = attach(_int("who"), v, "obj")
            return [wh, do] + subj.toks + [w, v], w, "?"
        wh = _int(self.pick(L.WH_ADVERB))  # adverbial: 'Where do you wanna go?'
        tail = self._wanna_vp(w, gap=False, trans=self.coin(0.3))
        attach(wh, tail[0], "advmod")
        return [wh, do] + subj.toks + [w] + tail, w, "?"

    def c_q_objrel(self):
        """Questions with a relative clause on the OBJECT (not DPE): 'Do you see the dog that
        is running?' / 'Who saw the boy that is smiling?'"""
        if self.coin(0.5):
            subj = self.np_animate()
        else:
            wh = _int("who")
            subj = NP([wh], wh, "Sing", 3, "m", True, True)
        question = subj.head.form != "who"
        auxes, v = self.verb(self.pick(L.VB_TRANS_ANIMATE), subj, self.tense(), question)
        attach(subj.head, v, "nsubj")
        obj = self.np_human()
        self.relcl(obj, self.pick(("subj", "obj", "red")))
        attach(obj.head, v, "obj")
        return self.order(subj, auxes, [v] + obj.toks, question), v, "?"

    def c_q_embedded_rel(self):
        """'Do you think the boy who is smiling is happy?' — the relative clause is on the
        subject of the EMBEDDED clause, so not DPE (the main-clause subject is 'you')."""
        subj = self.np_pron("you")
        auxes, v = self.verb(self.pick(L.VB_STATE[:3]), subj, "pres", True)
        attach(subj.head, v, "nsubj")
        esubj = self.np_human()
        self.relcl(esubj, self.pick(("subj", "obj", "red")))
        emb, _ = self.comp(v, "that" if self.coin(0.3) else None, subj=esubj,
                           frame=self.pick(("cop", "intrans")))
        return self.order(subj, auxes, [v] + emb, True), v, "?"

    # ----- imperatives ---------------------------------------------------------
    def c_imp(self):
        """'Look at the dog!' / 'Give me the ball.' / 'Don't touch the cake!'"""
        r = self.rng.random()
        end = "!" if self.coin(0.5) else "."
        if r < 0.3:
            v = Tok("look", "look", "VERB", feats(Mood="Imp", VerbForm="Fin"))
            obj = self.np_human() if self.coin(0.5) else self.np_thing()
            if self.coin(0.15):
                self.relcl(obj, self.pick(("subj", "obj", "red")))
            return [v] + self.pp(v, "obl", "at", obj), v, end
        if r < 0.5:
            v = Tok("give", "give", "VERB", feats(Mood="Imp", VerbForm="Fin"))
            me = attach(self.np_pron("I", "Acc").head, v, "iobj")
            obj = self.np_thing()
            attach(obj.head, v, "obj")
            return [v, me] + obj.toks, v, end
        vb = self.pick(ACTION_TRANS)
        v = Tok(vb.base, vb.base, "VERB", feats(Mood="Imp", VerbForm="Fin"))
        obj = self.np_thing()
        attach(obj.head, v, "obj")
        if r < 0.7:
            do = attach(Tok("do", "do", "AUX", feats(Mood="Imp", VerbForm="Fin")), v, "aux")
            nt = attach(Tok("n't", "not", "PART", feats(Polarity="Neg")), v, "advmod")
            return [do, nt, v] + obj.toks, v, end
        toks = [v] + obj.toks
        if self.coin(0.2):
            adj, g = self.adjunct_gerund(self.pick(("before", "after")))
            attach(g, v, "advcl")
            toks += adj
        return toks, v, end

    def c_imp_refl(self):
        """'Wash yourself!' (no antecedent before the reflexive)."""
        vb = self.pick(L.VB_REFL)
        v = Tok(vb.base, vb.base, "VERB", feats(Mood="Imp", VerbForm="Fin"))
        r = attach(self.reflexive(self.np_pron("you")), v, "obj")
        return [v, r], v, "!"

    # ----- direct positive evidence --------------------------------------------
    def _dpe_subject(self) -> NP:
        subj = self.np_human(allow_poss=False) if self.coin(0.8) else self.np_noun(self.pick(L.NN_ANIMAL))
        self.relcl(subj, self.pick(("subj", "obj", "red")))
        return subj

    def dpe_question_formation(self):
        """A question whose main-clause subject carries a relative clause:
        'Is the boy who is smiling happy?', 'Can the dog the girl saw run?',
        'What did the boy who is smiling eat?'."""
        subj = self._dpe_subject()
        r = self.rng.random()
        if r < 0.35:
            toks, head = self.copula(subj, question=True, kind="adj")
            return toks, head, "?", "ynq_cop"
        if r < 0.75:
            toks, head, _ = self.clause(subj, self.pick(("intrans", "trans_obj", "trans_anim")), question=True)
            return toks, head, "?", "ynq_aux"
        if r < 0.9:
            wh = _int("what") if self.coin(0.5) else _int("who")
            toks, head, host = self.clause(subj, "trans_obj" if wh.form == "what" else "trans_anim",
                                           question=True, gap=True)
            attach(wh, host, "obj")
            return [wh] + toks, head, "?", "whq_obj"
        if self.coin(0.4):  # 'Where is the dog that the girl saw?'
            wh = _int("where")
            cop = attach(self.be(subj, self.coin(0.2)), wh, "cop")
            attach(subj.head, wh, "nsubj")
            return [wh, cop] + subj.toks, wh, "?", "whq_adv"
        # 'Why is the boy who Mary saw crying?' (POSH App. C type ii: 'How could anyone that was awake ...')
        wh = _int(self.pick(("why", "how", "when", "where")))
        toks, head, _ = self.clause(subj, self.pick(("intrans", "trans_obj")), question=True)
        attach(wh, head, "advmod")
        return [wh] + toks, head, "?", "whq_adv"

    def dpe_binding(self):
        """A reflexive with two or more animate NPs before it."""
        r = self.rng.random()
        if r < 0.4:  # 'The girl said that the boy hurt himself.'
            msubj = self.np_animate(pron=0.3 if self.register == "child" else 0.1, allow_poss=False)
            question = self.coin(0.15)
            auxes, v = self.verb(self.pick(L.VB_STATE[:4]), msubj, self.pick(("pres", "past")), question)
            attach(msubj.head, v, "nsubj")
            esubj = self.np_animate(pron=0.0, allow_poss=False)
            eauxes, ev = self.verb(self.pick(L.VB_REFL), esubj, self.pick(("past", "pres")), False)
            attach(esubj.head, ev, "nsubj")
            attach(ev, v, "ccomp")
            refl = attach(self.reflexive(esubj), ev, "obj")
            emb = esubj.toks + eauxes + [ev, refl]
            if self.coin(self.p_that):
                emb = [attach(Tok("that", "that", "SCONJ"), ev, "mark")] + emb
            return self.order(msubj, auxes, [v] + emb, question), v, "?" if question else ".", "ccomp"
        if r < 0.7:  # "Mary's dad likes himself."
            subj = self.np_poss(possessed=self.pick(self.nn_human))
            kind = "poss"
        elif r < 0.9:  # 'The girl who saw the boy hurt herself.'
            subj = self.np_human(allow_poss=False)
            if self.coin(0.5):
                self.relcl(subj, "obj" if self.coin(0.6) else "red")
            else:
                rel = self._relativizer(subj, None)
                auxes, rv = self.verb(self.pick(L.VB_TRANS_ANIMATE), subj, self.pick(("past", "pres")), False)
                obj = self.np_animate("Acc", pron=0.0, allow_poss=False)
                attach(rel, rv, "nsubj")
                attach(obj.head, rv, "obj")
                attach(rv, subj.head, "acl:relcl")
                subj.toks = subj.toks + [rel] + auxes + [rv] + obj.toks
            kind = "relcl"
        else:  # 'After meeting the girl, the boy praised himself.'
            adj, g = self.adjunct_gerund()
            while not any(t.feats.startswith("Animacy=Anim") for t in adj):
                adj, g = self.adjunct_gerund()
            subj = self.np_animate(pron=0.0, allow_poss=False)
            auxes, v = self.verb(self.pick(L.VB_REFL), subj, "past", False)
            attach(subj.head, v, "nsubj")
            attach(g, v, "advcl")
            refl = attach(self.reflexive(subj), v, "obj")
            comma = attach(Tok(",", ",", "PUNCT"), g, "punct")
            return adj + [comma] + subj.toks + auxes + [v, refl], v, ".", "adjunct"
        auxes, v = self.verb(self.pick(L.VB_REFL), subj, self.pick(("past", "pres")), False)
        attach(subj.head, v, "nsubj")
        refl = attach(self.reflexive(subj), v, "obj")
        return subj.toks + auxes + [v, refl], v, ".", kind


CHILD = (
    ("decl_intrans", 6), ("decl_trans", 9), ("decl_cop", 5), ("deictic", 4), ("ccomp", 3),
    ("percep", 2), ("objrel", 3), ("subjrel", 1.2), ("refl", 1.5), ("wanna", 2.5), ("want_to", 1),
    ("poss", 2), ("adjunct", 0.8), ("whether", 0.4),
    ("ynq", 8), ("ynq_cop", 4), ("whq_obj", 5), ("whq_subj", 3), ("whq_adv", 5), ("whq_long", 1.5),
    ("wanna_q", 5), ("want_q", 1), ("q_objrel", 1.5), ("q_embedded_rel", 0.3),
    ("imp", 9), ("imp_refl", 0.3),
)
ADULT = (
    ("decl_trans", 12), ("decl_intrans", 4), ("decl_cop", 3), ("ccomp", 9), ("subjrel", 8),
    ("participial", 3), ("objrel", 7), ("adjunct", 6), ("adjunct_fin", 3), ("poss", 4),
    ("whether", 4), ("percep", 3), ("refl", 2), ("coord", 4), ("want_to", 2),
    ("ynq", 1.5), ("ynq_cop", 0.5), ("whq_obj", 1), ("whq_subj", 0.5), ("whq_adv", 0.8), ("whq_long", 0.5), ("want_q", 0.3),
    ("q_objrel", 0.5),
)
REGISTERS = {"child": CHILD, "adult": ADULT}
PHENOMENA = ("question_formation", "binding")
