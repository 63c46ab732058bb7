"""Word lists for the MSGS probes, drawn from povstim's lexicon, plus the few
predicates MSGS needs that the shared lexicon lacks.

MSGS splits the *crucial* lexical items of each linguistic feature between an
in-domain set (training data) and an out-of-domain set (test data), so that a
classifier cannot pass the test by memorising keywords (MSGS §3, "Data
Generation"). Every split below is fixed here, by name, not drawn at random:
the same config gives the same words on every machine.

Words not in ``povstim.lexicon`` (so never seen by a model pretrained on the
synthetic corpora; MSGS instead checked that every stem is in its pretraining
data) are only the control/raising predicates and the noun-complement nouns and
psych verbs of the syntactic-position feature. They are listed in ``NEW_WORDS``
and in docs/probes.md.
"""

from __future__ import annotations

from ... import lexicon as L
from ...lexicon import Noun, Verb

# --- nouns and names (shared lexicon, read-only) --------------------------------
def _consonant(nouns):
    """Nouns that take "a", never "an": the determiner features look for the word "a"."""
    return tuple(n for n in nouns if n.sg[:1] not in "aeiou")


ANIMATE = _consonant(L.NN_M + L.NN_F + L.NN_HUMAN_N + L.NN_ANIMAL)
HUMAN = _consonant(L.NN_M + L.NN_F + L.NN_HUMAN_N)
THINGS = _consonant(L.NN_OBJ)
PLACES = _consonant(L.NN_PLACE)
NAMES = L.NAMES_M + L.NAMES_F
# Single-word nominal predicates ("Tom was king"), by the name's gender (MSGS's
# "Lincoln was president" items, out of domain only).
TITLES = {"m": ("king", "prince"), "f": ("queen", "princess")}


def _by_base(verbs, bases):
    index = {v.base: v for v in verbs}
    return tuple(index[b] for b in bases)


# --- verbs for the frame (adjunct clauses): regular, past tense -------------------
# Adjunct clauses may not carry any linguistic feature: no irregular past
# (morphology), no -ing form (syntactic position), no adjective, no infinitive.
REGULAR_INTRANS = tuple(v for v in L.VB_INTRANS_ANIMATE if v.past.endswith("ed"))
REGULAR_TRANS = tuple(v for v in L.VB_TRANS_ANIMATE if v.past.endswith("ed"))

# --- morphology: irregular past vs bare (3rd person plural present) ---------------
# Only verbs whose past differs from the base (not hurt, read) and is irregular.
# The label-0 sentences use the *same* lemmas in the bare form, so the lemma
# never gives the label away; only the inflection does.
IRREGULAR_INTRANS = {
    "in": _by_base(L.VB_INTRANS_ANIMATE, ("run", "sleep", "swim", "sing", "sit")),
    "out": _by_base(L.VB_INTRANS_ANIMATE, ("leave", "fall", "go", "come", "win")),
}
IRREGULAR_TRANS_ANIMATE = {
    "in": _by_base(L.VB_TRANS_ANIMATE, ("see",)),
    "out": _by_base(L.VB_TRANS_ANIMATE, ("find", "meet")),
}
IRREGULAR_TRANS_THING = {
    "in": _by_base(L.VB_TRANS, ("eat", "build", "take", "hold", "draw", "write")),
    "out": _by_base(L.VB_TRANS, ("throw", "make", "break", "buy", "bring", "sell")),
}

# --- syntactic category: adjectives (said of people) --------------------------------
ADJECTIVES = {  # consonant-initial, like the nouns
    "in": ("happy", "tall", "hungry", "nice", "sleepy", "young"),
    "out": ("sad", "little", "big", "tired", "funny", "silly"),
}

# --- syntactic construction: control vs raising predicates --------------------------
# Three kinds (MSGS App. A): subject control/raising verbs, object
# control/raising verbs, control/raising adjectives; every kind in both domains.
CONTROL = {
    "subject_verb": {"in": ("tried", "wanted"), "out": ("decided", "refused")},
    "object_verb": {"in": ("persuaded", "forced"), "out": ("convinced", "encouraged")},
    "adjective": {"in": ("eager", "willing"), "out": ("ready", "reluctant")},
}
RAISING = {
    "subject_verb": {"in": ("seemed", "appeared"), "out": ("happened", "tended")},
    "object_verb": {"in": ("expected", "believed"), "out": ("considered", "assumed")},
    "adjective": {"in": ("likely", "certain"), "out": ("sure", "bound")},
}
# Infinitives after "to": intransitive verbs of animate subjects.
INFINITIVES = L.VB_INTRANS_ANIMATE

# --- syntactic position: main verb in -ing form or not ---------------------------------
# Action verbs with an animate object (not the statives like/love/admire/miss,
# whose progressive is odd); say-verbs taking a that-clause; nouns taking a
# that-complement, and psych verbs whose subject can be such a noun.
ACTION_TRANS = tuple(v for v in L.VB_TRANS_ANIMATE if v.base not in ("like", "love", "admire", "miss"))
ACTION_INTRANS = L.VB_INTRANS_ANIMATE
SAY_VERBS = _by_base(L.VB_STATE, ("say", "claim", "think", "notice", "remember"))
CONTENT_NOUNS = tuple(n for n in L.NN_OBJ if n.sg in ("story", "report")) + (
    Noun("rumor", "rumors", "n", False, False),
    Noun("claim", "claims", "n", False, False),
)
PSYCH_VERBS = _by_base(L.VB_TRANS_ANIMATE, ("scare", "help", "hurt")) + (
    Verb("surprise", "surprises", "surprised", "surprised", "surprising"),
    Verb("worry", "worries", "worried", "worried", "worrying"),
    Verb("bother", "bothers", "bothered", "bothered", "bothering"),
)

# Connectives of the adjunct clause split by domain: every sentence has at least
# one adjunct, so no out-of-domain sentence can equal an in-domain one.
CONNECTIVES = {"in": ("because", "while", "when"), "out": ("after", "before", "since")}

# Determiners of a noun phrase slot (shared lexicon forms).
SG_DETS = tuple(d.form for d in L.DET_SG)  # the a this that every
PL_DETS = tuple(d.form for d in L.DET_PL)  # the these those some


def _new_words() -> tuple[str, ...]:
    known = set(L.vocabulary())
    words = set()
    for table in (CONTROL, RAISING):
        for kinds in table.values():
            for ws in kinds.values():
                words.update(ws)
    words.update(n.sg for n in CONTENT_NOUNS)
    words.update(f for v in PSYCH_VERBS for f in (v.base, v.past, v.ger))
    return tuple(sorted(w for w in words if w not in known))


NEW_WORDS = _new_words()
