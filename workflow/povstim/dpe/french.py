"""French direct positive evidence: question formation and binding, ``languages=("fr",)``.

The definitions, from French grammar (Grevisse & Goosse, *Le bon usage*, §§ 389-399 on interrogatives
and §§ 655-658 on reflexives), not from any corpus sentence:

**question_formation_fr** -- a question formed by one of French's three strategies:

* *inversion*: the subject clitic (je, tu, il, elle, on, nous, vous, ils, elles) follows the finite verb
  ("veut-il", "as-tu", "mange-t-elle", "où vas-tu"), hyphenated or, as CHILDES transcribers often write
  it, not ("veux tu du lait"): the verb is the clause's first word, after at most a fronted wh-word and
  discourse words (et, alors, oh, ...);
* *est-ce que*: the question marker "est-ce que/qui" ("est-ce que tu viens", "qu'est-ce qui se passe"),
  hyphenated or not;
* *wh in situ*: a wh-word left in its argument position, the clause's last word after the verb
  ("tu vas où", "c'est quoi"), or *quoi* after a verb in a question ("tu fais quoi avec ça ?").

**binding_fr** -- a reflexive anaphor bound by its clause's subject: the clitic *se* / *s'* (not *si*'s
elided *s'il(s)*), *soi*, and the emphatic reflexives *lui-même*, *elle-même*, *eux-mêmes*, ... ; and
(posh) a first/second-person object clitic right after the same person's subject clitic
("je me lave", "tu t'assois", "nous nous cachons").

Modes. ``posh`` is the definitions above. ``strict`` keeps the structure-dependent evidence alone:
inversion (the clitic attaches to the main clause's finite verb) and the third-person reflexives
(*se*, *soi*, *X-même*). ``conservative`` adds recall: a question (``?``) with a wh-word anywhere, and a
hyphenated reflexive imperative ("lave-toi").

Why token sequences and not UD trees: fr_core_news_sm (trained on news) misparses child-directed
second-person speech -- "Veux tu du lait?" comes out with *tu* a CCONJ, "Tu vas où?" with *vas* a NOUN
(docs/own-data.md, "Your own language") -- so the rules read the tokens the parser is fed
(:func:`povstim.parse.tokenize.tokenize` with the French splits: "qu'" "est", "veut" "-il"), and the
surface pre-test is the rule itself on the same tokens. Measured against hand labels on French CDS
(tests/fixtures/french_cds_labels.tsv, docs/own-data.md), and cue by cue on a stratified sample
(tests/fixtures/french_cue_labels.tsv, scripts/french_cue_precision.py: dpe/cue_precision.yaml,
docs/french-cues.md); a cue measured below 0.5 precision never makes a removal targeted
(:func:`povstim.dpe.registry.feeds_targeted`).

The inversion cue reads "verb clitic" as an inversion only when the verb agrees with the clitic (a common
verb's inverted form or a regular person ending, or a euphonic t) and the clitic is not the subject of the verb
that follows: an interjection, a name or an imperative before a subject ("allez tu viens", "okay on va",
"Thomas tu viens") was most of what the cue removed before (docs/filter.md, "The French cues, one by one").
"""

from __future__ import annotations

from pathlib import Path

from ..parse.conllu import Sentence
from ..parse.tokenize import tokenize
from .registry import Context, Hit, Phenomenon, register

SUBJECT_CLITICS = frozenset("je tu il elle on nous vous ils elles".split())
WH = frozenset("où quoi qui quand comment combien pourquoi quel quelle quels quelles lequel laquelle "
               "lesquels lesquelles".split())
# Words that may precede a question's verb: a fronted wh-word (que/qu' too) and discourse words.
_FRONT = WH | frozenset("que qu'".split())
_LEAD = frozenset("et alors mais bon ben bah oh ah eh hein donc puis ok okay oui ouais non , ...".split())
# Closed-class words and discourse verbs that are never the inverted verb before a subject clitic
# ("et il", "regarde il pleut", "tiens tu vois").
_NOT_VERB = frozenset(
    "et ou mais donc alors puis car si que qu' qui quoi où quand comme comment pourquoi combien oui non bon ben "
    "bah oh ah eh hein là ici ça ce c' cela ceci le la les l' un une des du de d' au aux à en dans pour par sur "
    "sous avec sans chez vers moi toi lui eux me te se m' t' s' y ne n' pas plus très aussi encore déjà voilà "
    "voici tiens regarde regardez attends attendez écoute écoutez dis dites merci après avant maintenant "
    "parce puisque lorsque quoique tout toute tous toutes".split())
# Trailing words after an in-situ wh-word ("tu vas où là ?").
_TRAIL = frozenset("là hein alors donc encore ça".split())
_OBJECT_CLITICS = frozenset("me m' te t' se s' le la les l' lui leur y en nous vous".split())
# Finite forms that invert before each person's clitic (the common verbs of everyday
# questions), beyond the regular endings of _finite: "veux-tu", "est-il", "sont-ils".
_INVERTED = {
    "je": frozenset("suis ai puis dois sais peux vais veux fais dis vois crois".split()),
    "tu": frozenset("es as vas veux peux sais fais vois viens prends mets crois dois connais entends comprends "
                    "bois".split()),
    "3sg": frozenset("est a va fait veut peut sait faut vient voit doit prend met croit connaît entend comprend "
                     "vaut sera aura ira fera".split()),
    "nous": frozenset("sommes".split()),
    "vous": frozenset("êtes faites".split()),
    "3pl": frozenset("sont ont vont font veulent peuvent savent doivent viennent".split()),
}
_PREPOSITIONS = frozenset("de d' à au aux pour avec sur sous en dans par chez vers sans".split())
_MEME = frozenset(f"{p}-{m}" for p in "moi toi lui elle nous vous eux elles soi".split() for m in ("même", "mêmes"))
_REFLEXIVE_PAIRS = {"je": ("me", "m'"), "j'": ("me", "m'"), "tu": ("te", "t'"), "nous": ("nous",),
                    "vous": ("vous",)}


def _forms(tokens) -> list[str]:
    return [t.lower().replace("’", "'") for t in tokens]


def _words(forms: list[str]) -> list[int]:
    """Indices of word tokens (not punctuation)."""
    return [i for i, f in enumerate(forms) if any(c.isalnum() for c in f)]


def _is_question(forms: list[str]) -> bool:
    return bool(forms) and "?" in forms[-1]


# --- question formation cues: each returns the indices of the tokens that fired, or None ------------------

def _person(clitic: str) -> str:
    return {"il": "3sg", "elle": "3sg", "on": "3sg", "ils": "3pl", "elles": "3pl"}.get(clitic, clitic)


def _finite(word: str, clitic: str, level: int = 1) -> bool:
    """Whether ``word`` reads as a finite verb agreeing with the subject clitic ``clitic``: level 0, one of the
    common verbs' forms (:data:`_INVERTED`); level 1 also a regular ending (2sg -es, -ais, -ras; 3sg -ait; nous
    -ons; vous -ez; 3pl -ent, not -ment); level 2 also the ending a non-verb shares too often to open a clause
    with (je and 3sg -e), for the word right after the clitic, where a finite verb makes the clitic its subject."""
    person = _person(clitic)
    if word in _INVERTED.get(person, ()):
        return True
    if level == 0 or not word.isalpha() or word in _NOT_VERB:
        return False
    if person == "tu":
        return word.endswith(("es", "ais", "ras"))
    if person == "3sg":
        return word.endswith("ait") or (level == 2 and word.endswith("e") and len(word) > 2)
    if person == "je":
        return word.endswith(("ais", "rai")) or (level == 2 and word.endswith("e") and len(word) > 2)
    if person == "nous":
        return word.endswith("ons")
    if person == "vous":
        return word.endswith("ez")
    return word.endswith("ent") and not word.endswith("ment")


def inversion(forms: list[str]):
    for i, f in enumerate(forms):
        if f.startswith("-") and f.lstrip("-").removeprefix("t-") in SUBJECT_CLITICS and i > 0:
            return (i - 1, i)  # "veut -il", "mange -t-il": written with its hyphen
    words = _words(forms)
    for k, i in enumerate(words):
        clitic = forms[i]
        if clitic not in SUBJECT_CLITICS or k == 0:
            continue
        v = k - 1
        euphonic = forms[words[v]] == "t" and v > 0  # "a t il": the euphonic t
        if euphonic:
            v -= 1
        verb = forms[words[v]]
        if verb in _NOT_VERB or verb in _LEAD or verb.endswith("'") or not verb.isalpha() or verb in SUBJECT_CLITICS:
            continue
        # the verb agrees with the clitic (an interjection or a name before a subject does not: "allez tu
        # viens", "okay on va", "buzz il ...")
        if not (_finite(verb, clitic) or (euphonic and _person(clitic) == "3sg")):
            continue
        before = [forms[j] for j in words[:v]]
        if not all(w in _FRONT or w in _LEAD for w in before):
            continue
        # nous/vous after an imperative are its objects ("donne nous"): only in a marked question
        if clitic in ("nous", "vous") and not (_is_question(forms) or any(w in _FRONT for w in before)):
            continue
        # the clitic is the subject of the verb after it, not of the one before: "sais tu ranges", "fait il
        # l'appelle", "veut on ne ..."
        rest = [forms[j] for j in words[k + 1:]]
        level = 2
        while rest and rest[0] in _OBJECT_CLITICS:
            # le/la/les are determiners too ("est elle la pelle", "aimes tu les pommes"): then only a common
            # verb's form says the clitic is its subject
            level = min(level, 0 if rest[0] in ("le", "la", "les") else 1)
            rest = rest[1:]
        if rest and (rest[0] in ("ne", "n'") or _finite(rest[0], clitic, level)):
            continue
        return (words[v], i)
    return None


def est_ce_que(forms: list[str]):
    for i in range(len(forms) - 2):
        if forms[i] == "est" and forms[i + 1] in ("ce", "-ce") and forms[i + 2] in ("que", "qu'", "qui"):
            return (i, i + 1, i + 2)
    return None


def wh_in_situ(forms: list[str]):
    words = _words(forms)
    if len(words) < 2:
        return None
    k = len(words) - 1
    while k > 1 and forms[words[k]] in _TRAIL:
        k -= 1
    first = next((j for j, i in enumerate(words) if forms[i] not in _LEAD), 0)
    if forms[words[k]] in WH and k > first and est_ce_que(forms) is None:
        return (words[k],)
    if _is_question(forms):
        for j in range(first + 1, len(words)):
            i = words[j]
            if forms[i] == "quoi" and forms[words[j - 1]] not in _PREPOSITIONS:
                return (i,)
    return None


def wh_question(forms: list[str]):
    """conservative: a marked question with a wh-word anywhere."""
    if _is_question(forms):
        hit = next((i for i in _words(forms) if forms[i] in WH or forms[i] in ("que", "qu'")), None)
        if hit is not None:
            return (hit,)
    return None


# --- binding cues ----------------------------------------------------------------------------------------

def reflexive_se(forms: list[str]):
    for i, f in enumerate(forms):
        if f == "se" or (f == "s'" and (i + 1 >= len(forms) or forms[i + 1] not in ("il", "ils"))):
            return (i,)
    return None


def soi_meme(forms: list[str]):
    for i, f in enumerate(forms):
        if f == "soi" or f in _MEME:
            return (i,)
        if f in ("même", "mêmes") and i > 0 and forms[i - 1] in {"moi", "toi", "lui", "elle", "nous", "vous",
                                                                   "eux", "elles", "soi"}:
            return (i - 1, i)
    return None


def reflexive_person(forms: list[str]):
    for i, f in enumerate(forms[:-1]):
        objs = _REFLEXIVE_PAIRS.get(f)
        if not objs:
            continue
        j = i + 1
        if forms[j] in ("ne", "n'") and j + 1 < len(forms):
            j += 1
        if forms[j] in objs and j + 1 < len(forms) and any(c.isalpha() for c in forms[j + 1]):
            return (i, j)
    return None


def reflexive_imperative(forms: list[str]):
    for i, f in enumerate(forms):
        if "-" in f and f.rsplit("-", 1)[1] in ("toi", "vous", "nous", "moi") and f.split("-", 1)[0].isalpha():
            return (i,)
    return None


QF_CUES = {"strict": (inversion,), "posh": (inversion, est_ce_que, wh_in_situ),
           "conservative": (inversion, est_ce_que, wh_in_situ, wh_question)}
BINDING_CUES = {"strict": (reflexive_se, soi_meme), "posh": (reflexive_se, soi_meme, reflexive_person),
                "conservative": (reflexive_se, soi_meme, reflexive_person, reflexive_imperative)}


def first_cue(cues, forms: list[str]):
    """(cue name, token indices) of the first cue that fires, or None."""
    for cue in cues:
        hit = cue(forms)
        if hit is not None:
            return cue.__name__, hit
    return None


def _fired_cues(table):
    def fired(sent: Sentence, mode: str) -> list[str]:
        """Every cue of ``mode`` that fires on ``sent`` on its own (the rule records only the first)."""
        forms = _forms(t.form for t in sent.tokens)
        return [cue.__name__ for cue in table[mode] if cue(forms) is not None]
    return fired


def _rule(cues):
    def rule(sent: Sentence, ctx: Context):
        found = first_cue(cues, _forms(t.form for t in sent.tokens))
        if found is None:
            return None
        name, idx = found
        return Hit(tuple(sent.tokens[i] for i in idx), name)
    return rule


def _surface(table):
    every = tuple(dict.fromkeys(c for cues in table.values() for c in cues))

    def surface(words: list[str], text: str) -> bool:
        # the rules' own cues on the tokens the French parse is fed: necessary by construction
        return first_cue(every, _forms(tokenize(text, "fr")[0])) is not None
    return surface


# The pre-tests are the rules' cues: the parse's prefilter hash holds this whole module.
_SOURCE = Path(__file__).read_text(encoding="utf-8")

register(Phenomenon(
    name="question_formation_fr",
    rules={mode: _rule(cues) for mode, cues in QF_CUES.items()},
    surface=_surface(QF_CUES),
    sanity=None,
    languages=("fr",),
    surface_key=_SOURCE,
    description="French questions: subject-clitic inversion, est-ce que, wh in situ",
    extras={"fired_cues": _fired_cues(QF_CUES)},
))

register(Phenomenon(
    name="binding_fr",
    rules={mode: _rule(cues) for mode, cues in BINDING_CUES.items()},
    surface=_surface(BINDING_CUES),
    sanity=None,
    languages=("fr",),
    surface_key=_SOURCE,
    description="French reflexives: se/s', soi, lui-même..., same-person reflexive clitics",
    extras={"fired_cues": _fired_cues(BINDING_CUES)},
))
