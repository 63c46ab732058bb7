"""Question formation (POSH §2.2): auxiliary fronting across a subject relative clause.

Direct positive evidence is a yes/no question whose main-clause subject holds a
relative clause with an auxiliary in it ("Is the boy who is smiling happy?"):
it shows that the *main* auxiliary is fronted, not the first one.

Three modes:

- ``posh``: App. C literally, on whatever parse it is given;
- ``strict``: the disambiguating evidence itself;
- ``conservative``: App. C's decision as the *gold* tree would give it, from a
  real parser's output. Measured on gold UD trees of adult CHILDES utterances,
  the literal test on spaCy parses misses four in ten of App. C's removals,
  mostly because UD annotates free relatives ("That's what I think") and
  zero relatives ("the way you looked") as ``acl:relcl`` where the parser sees
  a complement clause or nothing. This mode keeps App. C's interrogative test
  and replaces "an ``nsubj`` before an ``acl:relcl``" by the union of four
  cues, each named in ``dpe.tsv``'s ``rule`` column (see docs/filter.md for
  what each costs):

  ``qf_conservative_relcl``       App. C's test on the parse, with the parser's
                                  relative clauses that UD would not call one set
                                  aside (an inverted question, an infinitival, a
                                  clause on a verb, an adverbial *when/if* clause);
  ``qf_conservative_free_relative``  a nominal wh-clause in relative word order
                                  ("what I think", "where it belongs");
  ``qf_conservative_zero_relative``  a noun phrase followed by a clause with a
                                  pronoun subject ("the day you got born");
  ``qf_conservative_relativizer``  a noun followed by *that/who/which/whom/whose*
                                  starting a clause.
"""

from __future__ import annotations

from . import Context, Hit, Phenomenon, register
from .surface import ends_with_question_mark, lower_words, norm
from .tree import base_rel, children, has_rel, is_aux, is_word, low, subtree, word_tokens
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
    """App. C: interrogative AND some ``nsubj`` token precedes some ``acl:relcl`` token (subtypes included)."""
    if len(word_tokens(sent)) < 3 or posh_interrogative(sent) is None:
        return None
    subj = next((t for t in sent.tokens if base_rel(t) == "nsubj"), None)
    if subj is None:
        return None
    rel = next((t for t in sent.tokens if has_rel(t, "acl:relcl") and t.id > subj.id), None)
    return (subj, rel) if rel is not None else None


# ----------------------------------------------------------------------------- strict

def strict_question(sent: Sentence) -> bool:
    words = word_tokens(sent)
    if not words:
        return False
    return ends_with_question_mark(sent.text) or is_aux(words[0]) or low(words[0]) in WH_WORDS


def is_relative(tok: Token) -> bool:
    # acl:relcl (and its subtypes, e.g. acl:relcl:subj) covers full and zero-relativizer
    # ("the dog the girl saw") relatives. Participial modifiers (acl: "the dog sitting
    # there") are left out on purpose: they hold no auxiliary, so "Is the dog sitting
    # there sleepy?" cannot tell the linear rule from the structural one, and spaCy tags
    # the progressive of ordinary questions ("Is Daddy driving the truck?") as acl.
    return has_rel(tok, "acl:relcl")


def main_predicates(sent: Sentence, kids: dict[int, list[Token]]) -> list[Token]:
    roots = [t for t in sent.tokens if t.head == 0]
    out, stack = [], list(roots)
    while stack:
        t = stack.pop()
        if t in out:
            continue
        out.append(t)
        stack.extend(k for k in kids.get(t.id, []) if base_rel(k) == "conj" and k.upos in ("VERB", "AUX", "ADJ", "NOUN", "PROPN", "PRON"))
    return out


def qf_strict_subject_relative_question(sent: Sentence, ctx: Context):
    """A question (final ``?``, auxiliary- or wh-initial) whose main-clause subject holds a relative clause
    with an auxiliary in it.

    Only an auxiliary inside the relative clause makes the question disambiguating:
    "Can the dog the girl saw run?" fronts the only auxiliary there is, so the linear
    rule ("front the first auxiliary") and the structural one give the same question.
    """
    if len(word_tokens(sent)) < 3 or not strict_question(sent):
        return None
    kids = children(sent)
    for pred in main_predicates(sent, kids):
        deps = kids.get(pred.id, [])
        if any(base_rel(d) == "expl" for d in deps):
            continue  # "Is there a boy who ...?": the relative follows the auxiliary, no evidence
        for subj in deps:
            if base_rel(subj) != "nsubj":
                continue
            for t in subtree(subj, kids):
                if t is subj or not is_relative(t):
                    continue
                aux = next((a for a in subtree(t, kids) if is_aux(a)), None)
                if aux is not None:
                    return (subj, t, aux)
    return None


# ----------------------------------------------------------------------- conservative

# Nominative pronouns that can open a zero or free relative ("the day *you* got born").
SUBJECT_PRONOUNS = frozenset("i you he she we they it".split())
# Words that open a noun phrase: a zero relative needs a real noun phrase before its
# subject, not a vocative ("Honey you want more?").
NP_OPENERS = frozenset(
    "the a an this that these those my your his her its our their some any every no another each all other".split()
)
# Nominal heads that need no determiner ("anything you want", "all you hafta say").
BARE_NOMINALS = frozenset(
    """anything something everything nothing anyone someone everyone anybody somebody everybody nobody
    all one ones else""".split()
)
# Relative pronouns/complementizers that start a relative clause after a noun. when/where
# are left out: after a noun they mostly start adverbial clauses in child-directed speech.
RELATIVIZERS = frozenset("that who which whom whose".split())
# Wh-words of nominal and locative free relatives ("what I think", "where it belongs");
# when/how/why clauses are adverbial or embedded questions in UD.
FREE_WH = frozenset("what whatever who whoever where wherever".split())
# Verbs whose wh-complement is an embedded question (UD ccomp), not a free relative.
QUESTION_EMBEDDERS = frozenset(
    """know knows knew wonder wonders wondered ask asks asked tell tells told guess remember
    forget forgot understand decide care mean see saw look watch show showed explain figure find
    check""".split()
)
# "..., I wonder." / "..., you know": a final parenthetical, not a relative clause.
PARENTHETICALS = frozenset("know think guess wonder see mean bet suppose say".split())
# Subordinators of adverbial clauses the parser sometimes attaches to a noun as a relcl.
ADVERBIAL_OPENERS = frozenset("when if because cause while".split())


def _finite(t: Token) -> bool:
    if t.upos == "AUX":
        return True
    if t.upos == "VERB" and t.xpos not in ("VBG", "VBN", "VB"):
        return True
    return t.feat("VerbForm") == "Fin"


def _finite_after(ws: list[Token], j: int, span: int = 3) -> int | None:
    """Index of a finite verb among the ``span`` words from ``ws[j]`` ("you hafta say": two words on)."""
    for k in range(j, min(len(ws), j + span)):
        if _finite(ws[k]):
            return k
    return None


def _inverted(ws: list[Token]) -> bool:
    """A wh-phrase, then an auxiliary, then a noun phrase: a question's word order, never a relative's."""
    for i, t in enumerate(ws):
        if low(t) not in WH_WORDS:
            continue
        j = i + 1
        if j < len(ws) and low(t) in ("whose", "what", "which") and ws[j].upos in ("NOUN", "PROPN", "ADJ"):
            j += 1  # "whose ball is that", "what song does she sing"
        return j + 1 < len(ws) and ws[j].upos == "AUX" and ws[j + 1].upos in ("PRON", "PROPN", "DET", "NOUN")
    return False


def _opens_np(ws: list[Token], i: int) -> bool:
    """A determiner among the three words before ``ws[i]``."""
    return any(low(w) in NP_OPENERS for w in ws[max(0, i - 3):i])


def qf_conservative_relcl(sent: Sentence) -> tuple[Token, ...] | None:
    """App. C's test on the parse, counting only the parser's relative clauses UD would call one."""
    kids = children(sent)
    by_id = {t.id: t for t in sent.tokens}
    subj = next((t for t in sent.tokens if base_rel(t) == "nsubj"), None)
    if subj is None:
        return None
    for t in sent.tokens:
        if not has_rel(t, "acl:relcl") or t.id <= subj.id:
            continue
        clause = [w for w in subtree(t, kids) if is_word(w)]
        deps = kids.get(t.id, [])
        head = by_id.get(t.head)
        if _inverted(clause):
            continue  # "Mommy who's that?", "Me what did I do?": a question misattached as a relative
        if any(low(d) == "to" and d.upos == "PART" for d in deps) and not any(base_rel(d) == "nsubj" for d in deps):
            continue  # "the place to cry": an infinitival, UD acl
        if head is not None and (head.upos in ("VERB", "AUX") or low(head) in WH_WORDS):
            continue  # a relative clause modifies a noun phrase, not a verb nor a wh-word ("Who who takes ...?")
        if clause and low(clause[0]) in ADVERBIAL_OPENERS:
            continue  # "DW's still up when Arthur gets home": an adverbial clause
        return (subj, t)
    return None


def qf_conservative_free_relative(sent: Sentence) -> tuple[Token, ...] | None:
    """A nominal wh-clause in relative word order: wh-word, a subject, a finite verb ("what I think").

    UD annotates such free relatives as ``acl:relcl`` on the wh-word; parsers trained
    on other schemes call them complement clauses.
    """
    ws = word_tokens(sent)
    for i, t in enumerate(ws):
        if low(t) not in FREE_WH:
            continue
        if any(low(w) in QUESTION_EMBEDDERS for w in ws[max(0, i - 2):i]):
            continue  # "Tell us what you did": an embedded question (UD ccomp)
        if ends_with_question_mark(sent.text) and not any(w.upos in ("VERB", "AUX") for w in ws[:i]):
            continue  # "What you got?", "Mommy where Sally go?": a main question that dropped its auxiliary
        if _inverted(ws[i:]):
            continue  # "What song does she sing": a question
        j = i + 1
        if j < len(ws) and low(ws[j]) in NP_OPENERS - {"that", "this"} and j + 1 < len(ws):
            j += 1  # "where the bear lives"
        if j < len(ws) and (low(ws[j]) in SUBJECT_PRONOUNS or ws[j].upos in ("NOUN", "PROPN")):
            k = _finite_after(ws, j + 1)
            if k is not None:
                return Hit((t, ws[j], ws[k]), "qf_conservative_free_relative")
    return None


def qf_conservative_zero_relative(sent: Sentence) -> tuple[Token, ...] | None:
    """A noun phrase directly followed by a clause with a pronoun subject and a finite verb
    ("the day you got born", "anything you want", "that sound your making")."""
    ws = word_tokens(sent)
    for i, t in enumerate(ws[1:], 1):
        f = low(t)
        # "your" + -ing: the CHILDES spelling of "you're" ("that sound your making")
        your_ing = f == "your" and i + 1 < len(ws) and low(ws[i + 1]).endswith("ing")
        if f not in SUBJECT_PRONOUNS and not your_ing:
            continue
        prev = ws[i - 1]
        pf = low(prev)
        if pf in BARE_NOMINALS:
            pass
        elif prev.upos in ("NOUN", "PROPN", "ADJ") or prev.xpos.startswith("NN"):
            if not _opens_np(ws, i - 1):
                continue  # "Honey you want more?": a vocative, no noun phrase
        elif prev.upos == "VERB" and prev.xpos in ("VB", "VBP") and i >= 2 and low(ws[i - 2]) in NP_OPENERS:
            pass  # "that sound your making": a noun the tagger calls a verb
        else:
            continue
        if your_ing:
            return Hit((prev, t, ws[i + 1]), "qf_conservative_zero_relative")
        k = _finite_after(ws, i + 1)
        if k is None:
            continue
        if low(ws[k]) in PARENTHETICALS and k == len(ws) - 1:
            continue  # "Why did Daddy make that suggestion I wonder."
        if ws[k].upos == "AUX" and (k + 1 >= len(ws) or ws[k + 1].upos not in ("VERB", "AUX", "ADV", "PART")):
            continue  # "in the car they're what?": a run-on copula clause, not a relative
        return Hit((prev, t, ws[k]), "qf_conservative_zero_relative")
    return None


def qf_conservative_relativizer(sent: Sentence) -> tuple[Token, ...] | None:
    """A noun (or anything/something/...) followed by a relativizer that opens a clause."""
    ws = word_tokens(sent)
    for i, t in enumerate(ws[1:], 1):
        if low(t) not in RELATIVIZERS or i + 1 >= len(ws):
            continue
        prev, nxt = ws[i - 1], ws[i + 1]
        if not (prev.upos in ("NOUN", "PROPN") or low(prev) in BARE_NOMINALS):
            continue
        if low(t) == "that" and nxt.upos in ("NOUN", "ADJ", "NUM"):
            continue  # "give the doggy that bone": a determiner
        if not (low(prev) in BARE_NOMINALS or _opens_np(ws, i - 1)) and _inverted(ws[i:]):
            continue  # "Mommy who's that?": a vocative and a question
        return Hit((prev, t), "qf_conservative_relativizer")
    return None


def qf_conservative(sent: Sentence, ctx: Context):
    """App. C's interrogative test AND a relative clause found by any of four cues (module docstring)."""
    if len(word_tokens(sent)) < 3 or posh_interrogative(sent) is None:
        return None
    hit = qf_conservative_relcl(sent)
    if hit:
        return Hit(hit, "qf_conservative_relcl")
    return qf_conservative_free_relative(sent) or qf_conservative_zero_relative(sent) or qf_conservative_relativizer(sent)


def sanity(words: list[str], text: str) -> bool:
    """App. C sanity check: a question mark and at least two auxiliaries."""
    if "?" not in text:
        return False
    return sum(w in AUX_FORMS for w in lower_words(text)) >= 2


register(Phenomenon(
    name="question_formation",
    rules={"posh": qf_posh_interrogative_nsubj_before_relcl, "strict": qf_strict_subject_relative_question,
           "conservative": qf_conservative},
    surface=surface,
    sanity=sanity,
    description="yes/no questions whose subject holds a relative clause",
))
