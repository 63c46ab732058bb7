"""A small, curated, tagged English lexicon.

Shared by the synthetic corpus generator (``povstim.synth``) and, read-only, by
the POSH-BENCH minimal-pair generator, so the benchmark's words are words the
synthetic corpora actually contain.

Data structures (all immutable):

``Noun(sg, pl, gender, animate, human, register)``
    ``gender`` is ``"m"``, ``"f"`` or ``"n"`` (neutral: either sex for humans, "it"
    for animals and things); ``register`` is ``"child"``, ``"adult"`` or ``"both"``
    (which synthetic register prefers the word).
``Name(form, gender)``
    a proper name; gender ``"m"`` or ``"f"``.
``Verb(base, s3, past, pp, ger)``
    every inflection: base ("see"), 3rd person singular present ("sees"), past
    ("saw"), past participle ("seen"), gerund / present participle ("seeing").
    ``verb.form(name)`` takes one of ``"base" "s3" "past" "pp" "ger"``.
``Adj(form, kind)``
    ``kind`` is ``"person"`` (said of animate beings: happy, tall) or ``"thing"``.
``Aux(form, lemma, kind, number, tense)``
    ``kind``: ``"be" "do" "have" "modal"``; ``number``: ``"Sing" "Plur"`` or
    ``None`` (any subject); ``tense``: ``"Pres" "Past"`` or ``None`` (modals).
    ``person`` restricts "am" (1) and "is/was/does/has" (3, singular).
``Det(form, number, kind)``
    ``number``: ``"Sing" "Plur"`` or ``None``; ``kind``: ``"Art" "Dem" "Poss" "Ind"``.
``Pron(nom, acc, poss, refl, person, number, gender, animate)``

``CLASSES`` maps a class name to a tuple of entries. Class names follow the
POSH-BENCH template slots (Table 13):

=====================  ==========================================================
nn_m, nn_f             gendered human nouns (boy/girl, king/queen, ...), Noun
nn_human_n             sex-neutral human nouns (teacher, baby, friend, ...), Noun
nn_human               nn_m + nn_f + nn_human_n
nn_animal              animals (animate, not human), Noun
nn_animate             nn_human + nn_animal
nn_obj                 things (inanimate), Noun
nn_place               places for locative phrases ("in the garden"), Noun
names_m, names_f       proper names, Name
vb_trans_animate       transitive verbs taking an animate object (like, hurt), Verb
vb_refl                the vb_trans_animate verbs natural with a reflexive object
vb_trans               transitive verbs taking a thing as object (read, eat), Verb
vb_intrans_animate     intransitive verbs of animate subjects (run, sleep), Verb
vb_state               verbs taking a that-clause (think, say, know, believe), Verb
vb_question            verbs taking an embedded question (wonder, ask), Verb
vb_wh_embed            verbs taking BOTH a declarative (that / bare) and an interrogative
                       complement (know, remember, forget, notice, hear): the POSH wh-island
                       templates embed under them, so that both members of a pair are fine
                       by verb selection and only the island differs. Benchmark only.
vb_percep              perception verbs taking object + gerund (see, hear), Verb
vb_wanna_intrans       intransitive verbs natural after *wanna* (go, play), Verb
vb_wanna_trans         transitive verbs natural after *wanna* (eat, read), Verb
vb_intrans_strict      strictly intransitive verbs (sleep, cry, laugh): the *wanna* intransitive
                       template's bad member ("What does Mary wanna sleep?") is bad only if
                       the verb cannot take an object. Benchmark only.
adj_person, adj_thing  Adj
aux                    all auxiliaries and modals, Aux
aux_sg                 auxiliaries that go with a 3sg subject and *wanna* (does, did)
modal                  can, will, should, could, would, might
det, det_sg, det_pl    determiners, Det
pron                   personal pronouns, Pron
wh_nominal, wh_adverb  who/what; where/when/why/how (plain strings)
prep_adjunct           after, before, while, without (take a gerund clause)
prep_loc               in, on, under, near, behind (locative)
=====================  ==========================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class Noun:
    sg: str
    pl: str
    gender: str  # m | f | n
    animate: bool
    human: bool
    register: str = "both"  # child | adult | both

    def form(self, number: str) -> str:
        return self.sg if number == "Sing" else self.pl


@dataclass(frozen=True)
class Name:
    form: str
    gender: str  # m | f


@dataclass(frozen=True)
class Verb:
    base: str
    s3: str
    past: str
    pp: str
    ger: str

    def form(self, name: str) -> str:
        return getattr(self, name)


@dataclass(frozen=True)
class Adj:
    form: str
    kind: str  # person | thing


@dataclass(frozen=True)
class Aux:
    form: str
    lemma: str
    kind: str  # be | do | have | modal
    number: str | None
    tense: str | None
    person: int | None = None


@dataclass(frozen=True)
class Det:
    form: str
    number: str | None
    kind: str  # Art | Dem | Poss | Ind


@dataclass(frozen=True)
class Pron:
    nom: str
    acc: str
    poss: str
    refl: str
    person: int
    number: str
    gender: str | None
    animate: bool


def _nouns(spec: str, gender: str, animate: bool, human: bool, register: str = "both") -> tuple[Noun, ...]:
    """'boy man/men' -> regular plural by default, irregular as sg/pl."""
    out = []
    for item in spec.split():
        if "/" in item:
            sg, pl = item.split("/")
        elif item.endswith(("s", "sh", "ch", "x")):
            sg, pl = item, item + "es"
        elif item.endswith("y") and item[-2] not in "aeiou":
            sg, pl = item, item[:-1] + "ies"
        else:
            sg, pl = item, item + "s"
        out.append(Noun(sg, pl, gender, animate, human, register))
    return tuple(out)


def _verbs(*specs: str) -> tuple[Verb, ...]:
    """Each spec: 'base s3 past pp ger'."""
    out = []
    for spec in specs:
        parts = spec.split()
        if len(parts) != 5:
            raise ValueError(f"verb spec needs 5 forms: {spec!r}")
        out.append(Verb(*parts))
    return tuple(out)


# --- nouns ---------------------------------------------------------------------
# Gendered pairs, aligned so nn_m[i] and nn_f[i] are counterparts.
NN_M = (
    _nouns("boy brother", "m", True, True, "both")
    + _nouns("dad daddy grandpa uncle", "m", True, True, "child")
    + _nouns("man/men father king prince son husband", "m", True, True, "both")
)
NN_F = (
    _nouns("girl sister", "f", True, True, "both")
    + _nouns("mom mommy grandma aunt", "f", True, True, "child")
    + _nouns("woman/women mother queen princess daughter wife/wives", "f", True, True, "both")
)
NN_HUMAN_N = _nouns("baby kid", "n", True, True, "child") + _nouns(
    "friend child/children teacher doctor student nurse farmer neighbor driver player person/people writer artist cook",
    "n", True, True, "both",
)
NN_ANIMAL = _nouns(
    "dog cat bird fish/fish horse cow duck bear rabbit mouse/mice frog monkey lion pig sheep/sheep",
    "n", True, False,
)
NN_OBJ = _nouns(
    "toy cookie banana sandwich truck spoon blanket", "n", False, False, "child"
) + _nouns(
    "ball cup apple cake shoe hat bottle book box chair table door window letter picture car key bag house story song "
    "newspaper report plan photo computer bike phone", "n", False, False, "both",
)
NN_PLACE = _nouns("garden park kitchen room house school city street store river bed", "n", False, False)

NAMES_M = tuple(Name(n, "m") for n in "Tom John Sam Max Ben Jack Peter David Mark Paul".split())
NAMES_F = tuple(Name(n, "f") for n in "Mary Anna Lucy Emma Sarah Lily Kate Emily Jane Susan".split())

# --- verbs ---------------------------------------------------------------------
VB_TRANS_ANIMATE = _verbs(
    "like likes liked liked liking",
    "see sees saw seen seeing",
    "help helps helped helped helping",
    "hurt hurts hurt hurt hurting",
    "call calls called called calling",
    "kiss kisses kissed kissed kissing",
    "hug hugs hugged hugged hugging",
    "love loves loved loved loving",
    "find finds found found finding",
    "watch watches watched watched watching",
    "chase chases chased chased chasing",
    "push pushes pushed pushed pushing",
    "tickle tickles tickled tickled tickling",
    "wash washes washed washed washing",
    "visit visits visited visited visiting",
    "meet meets met met meeting",
    "follow follows followed followed following",
    "miss misses missed missed missing",
    "scare scares scared scared scaring",
    "thank thanks thanked thanked thanking",
    "praise praises praised praised praising",
    "blame blames blamed blamed blaming",
    "admire admires admired admired admiring",
    "criticize criticizes criticized criticized criticizing",
)
_REFL_OK = {"like", "see", "help", "hurt", "wash", "love", "scare", "praise", "blame", "admire", "criticize", "tickle"}
VB_REFL = tuple(v for v in VB_TRANS_ANIMATE if v.base in _REFL_OK)
VB_TRANS = _verbs(
    "read reads read read reading",
    "eat eats ate eaten eating",
    "push pushes pushed pushed pushing",
    "find finds found found finding",
    "open opens opened opened opening",
    "build builds built built building",
    "drop drops dropped dropped dropping",
    "throw throws threw thrown throwing",
    "want wants wanted wanted wanting",
    "have has had had having",
    "take takes took taken taking",
    "make makes made made making",
    "carry carries carried carried carrying",
    "break breaks broke broken breaking",
    "hold holds held held holding",
    "buy buys bought bought buying",
    "draw draws drew drawn drawing",
    "fix fixes fixed fixed fixing",
    "bring brings brought brought bringing",
    "need needs needed needed needing",
    "write writes wrote written writing",
    "sell sells sold sold selling",
)
VB_INTRANS_ANIMATE = _verbs(
    "run runs ran run running",
    "sleep sleeps slept slept sleeping",
    "smile smiles smiled smiled smiling",
    "cry cries cried cried crying",
    "leave leaves left left leaving",
    "laugh laughs laughed laughed laughing",
    "jump jumps jumped jumped jumping",
    "swim swims swam swum swimming",
    "sing sings sang sung singing",
    "dance dances danced danced dancing",
    "walk walks walked walked walking",
    "play plays played played playing",
    "sit sits sat sat sitting",
    "fall falls fell fallen falling",
    "go goes went gone going",
    "come comes came come coming",
    "wait waits waited waited waiting",
    "talk talks talked talked talking",
    "stay stays stayed stayed staying",
    "win wins won won winning",
)
VB_STATE = _verbs(
    "think thinks thought thought thinking",
    "say says said said saying",
    "know knows knew known knowing",
    "believe believes believed believed believing",
    "hope hopes hoped hoped hoping",
    "claim claims claimed claimed claiming",
    "notice notices noticed noticed noticing",
    "remember remembers remembered remembered remembering",
)
VB_QUESTION = _verbs(
    "wonder wonders wondered wondered wondering",
    "ask asks asked asked asking",
    "forget forgets forgot forgotten forgetting",
)
VB_PERCEP = _verbs(
    "see sees saw seen seeing",
    "hear hears heard heard hearing",
    "watch watches watched watched watching",
    "notice notices noticed noticed noticing",
)
VB_WANNA_INTRANS = tuple(
    v for v in VB_INTRANS_ANIMATE if v.base in {"play", "go", "sleep", "swim", "dance", "sing", "come", "sit", "stay", "walk", "run", "jump"}
)
VB_WANNA_TRANS = tuple(
    v for v in VB_TRANS if v.base in {"eat", "read", "have", "make", "draw", "build", "take", "hold", "buy", "throw", "open"}
)
# Benchmark-only classes (the synthetic generator never draws from them, so
# adding them changes no corpus). Both are judgements about verb selection that
# decide whether a POSH-BENCH bad sentence is bad for the intended reason:
# * a wh-island bad member must be bad by the island, not because the embedding
#   verb rejects the complement: "think" takes no embedded question ("Who did he
#   think whether Sarah called?") and "wonder" no declarative ("What did she
#   wonder he bought?"); these verbs take both;
# * a wanna bad member ("What does Mary wanna V?") is grammatical when V can be
#   transitive ("... wanna sing?", "... wanna play?"), so V must be strictly
#   intransitive. Not here: play, sing, dance, walk, run, jump, swim, win, leave,
#   wait, talk, sit, stay (stay calm), go (quotative "the cow goes moo"), fall.
VB_WH_EMBED = tuple(sorted(
    {v for v in VB_STATE + VB_QUESTION + VB_PERCEP if v.base in {"know", "remember", "forget", "notice", "hear"}},
    key=lambda v: v.base,
))
VB_INTRANS_STRICT = tuple(v for v in VB_INTRANS_ANIMATE if v.base in {"sleep", "smile", "cry", "laugh", "come"})

# --- adjectives ----------------------------------------------------------------
ADJ_PERSON = tuple(
    Adj(a, "person") for a in "happy sad tall little big hungry tired nice funny angry silly sleepy young old".split()
)
ADJ_THING = tuple(Adj(a, "thing") for a in "red blue green big little new old nice yellow heavy broken".split())

# --- function words ------------------------------------------------------------
AUX = (
    Aux("am", "be", "be", "Sing", "Pres", 1),
    Aux("is", "be", "be", "Sing", "Pres", 3),
    Aux("are", "be", "be", "Plur", "Pres"),
    Aux("was", "be", "be", "Sing", "Past"),
    Aux("were", "be", "be", "Plur", "Past"),
    Aux("does", "do", "do", "Sing", "Pres", 3),
    Aux("do", "do", "do", "Plur", "Pres"),
    Aux("did", "do", "do", None, "Past"),
    Aux("has", "have", "have", "Sing", "Pres", 3),
    Aux("have", "have", "have", "Plur", "Pres"),
    Aux("can", "can", "modal", None, None),
    Aux("will", "will", "modal", None, None),
    Aux("should", "should", "modal", None, None),
    Aux("could", "could", "modal", None, None),
    Aux("would", "would", "modal", None, None),
    Aux("might", "might", "modal", None, None),
)
MODAL = tuple(a for a in AUX if a.kind == "modal")
AUX_SG = tuple(a for a in AUX if a.form in ("does", "did"))

DET = (
    Det("the", None, "Art"),
    Det("a", "Sing", "Art"),
    Det("this", "Sing", "Dem"),
    Det("that", "Sing", "Dem"),
    Det("these", "Plur", "Dem"),
    Det("those", "Plur", "Dem"),
    Det("some", "Plur", "Ind"),
    Det("every", "Sing", "Ind"),
)
DET_SG = tuple(d for d in DET if d.number in (None, "Sing"))
DET_PL = tuple(d for d in DET if d.number in (None, "Plur"))

PRON = (
    Pron("I", "me", "my", "myself", 1, "Sing", None, True),
    Pron("you", "you", "your", "yourself", 2, "Sing", None, True),
    Pron("he", "him", "his", "himself", 3, "Sing", "m", True),
    Pron("she", "her", "her", "herself", 3, "Sing", "f", True),
    Pron("it", "it", "its", "itself", 3, "Sing", "n", False),
    Pron("we", "us", "our", "ourselves", 1, "Plur", None, True),
    Pron("they", "them", "their", "themselves", 3, "Plur", None, True),
)
PRON_BY_NOM = MappingProxyType({p.nom: p for p in PRON})

WH_NOMINAL = ("who", "what")
WH_ADVERB = ("where", "when", "why", "how")
PREP_ADJUNCT = ("after", "before", "while", "without")
PREP_LOC = ("in", "on", "under", "near", "behind")

CLASSES: MappingProxyType = MappingProxyType({
    "nn_m": NN_M,
    "nn_f": NN_F,
    "nn_human_n": NN_HUMAN_N,
    "nn_human": NN_M + NN_F + NN_HUMAN_N,
    "nn_animal": NN_ANIMAL,
    "nn_animate": NN_M + NN_F + NN_HUMAN_N + NN_ANIMAL,
    "nn_obj": NN_OBJ,
    "nn_place": NN_PLACE,
    "names_m": NAMES_M,
    "names_f": NAMES_F,
    "vb_trans_animate": VB_TRANS_ANIMATE,
    "vb_refl": VB_REFL,
    "vb_trans": VB_TRANS,
    "vb_intrans_animate": VB_INTRANS_ANIMATE,
    "vb_state": VB_STATE,
    "vb_question": VB_QUESTION,
    "vb_percep": VB_PERCEP,
    "vb_wanna_intrans": VB_WANNA_INTRANS,
    "vb_wanna_trans": VB_WANNA_TRANS,
    "vb_wh_embed": VB_WH_EMBED,
    "vb_intrans_strict": VB_INTRANS_STRICT,
    "adj_person": ADJ_PERSON,
    "adj_thing": ADJ_THING,
    "aux": AUX,
    "aux_sg": AUX_SG,
    "modal": MODAL,
    "det": DET,
    "det_sg": DET_SG,
    "det_pl": DET_PL,
    "pron": PRON,
    "wh_nominal": WH_NOMINAL,
    "wh_adverb": WH_ADVERB,
    "prep_adjunct": PREP_ADJUNCT,
    "prep_loc": PREP_LOC,
})


def forms(entry) -> tuple[str, ...]:
    """Every surface form of a lexicon entry."""
    if isinstance(entry, str):
        return (entry,)
    if isinstance(entry, Noun):
        return (entry.sg, entry.pl)
    if isinstance(entry, Verb):
        return (entry.base, entry.s3, entry.past, entry.pp, entry.ger)
    if isinstance(entry, Pron):
        return (entry.nom, entry.acc, entry.poss, entry.refl)
    return (entry.form,)


def vocabulary() -> list[str]:
    """Every surface form in the lexicon, sorted."""
    return sorted({f for cls in CLASSES.values() for e in cls for f in forms(e)})
