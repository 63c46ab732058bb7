"""Question formation (POSH §2.2): auxiliary fronting across a subject relative clause.

Direct positive evidence is a yes/no question whose main-clause subject holds a
relative clause with an auxiliary in it ("Is the boy who is smiling happy?"):
it shows that the *main* auxiliary is fronted, not the first one.

Three modes:

- ``posh``: App. C literally, on whatever parse it is given;
- ``strict``: the disambiguating evidence itself;
- ``conservative``: App. C's decision as the *gold* tree would give it, from a
  real parser's output, recall first. UD annotates free relatives ("that is
  what she wants"), zero relatives ("the hat he wore") and "that's why/where +
  clause" as ``acl:relcl``; a parser trained on another scheme sees a
  complement clause, an adverbial clause or nothing, so App. C's literal test
  on its parse misses them. This mode keeps App. C's interrogative test (by
  word form) and replaces "an ``nsubj`` before an ``acl:relcl``" by the union
  of six analyses, each named in ``dpe.tsv``'s ``rule`` column:

  ``qf_conservative_relcl``        App. C's literal test on the parse (so the
                                   mode removes everything ``posh`` removes);
  ``qf_conservative_wh_clause``    a wh-word followed by a clause in declarative
                                   order (subject, then verb), or a *what/who*
                                   that is its clause's own subject, not a
                                   question's own wh-word nor a verb's embedded
                                   question;
  ``qf_conservative_zero_relative``  a noun phrase followed directly by a clause
                                   with a pronoun subject;
  ``qf_conservative_relativizer``  a noun phrase (and an adverb or none) followed
                                   by *that/who/which/whom/whose* and a verb;
  ``qf_conservative_cleft``        an it-cleft whose relative hangs on a pronoun:
                                   a form of *be* with *it/that/this* and a zero or
                                   *that* relative (a wh-question's cleft), or *it* +
                                   *be* + a pronoun + a relative;
  ``qf_conservative_extraposed``   a relative extraposed after the verb of a
                                   wh-question: *that/who/which* right after a verb
                                   or adverb, as the relative's own subject (a
                                   finite verb after it, and a predicate after that).

  ``qf_conservative_wh_clause`` also takes the free relatives of place and time: *where*
  after a verb that does not embed questions (``constructions/words/wh_clause_heads.txt``),
  *when/where* after a preposition.

  Every cue is a general pattern over closed word classes and tags: none names
  a sentence and none has a part fitted to data (tests/test_dpe_no_dev_sentences.py
  checks that no literal quotes the validation treebank). Measured out of sample
  by ``filter_validation`` (cross-validated by transcript; docs/filter.md).
"""

from __future__ import annotations

from .registry import Context, Hit, Phenomenon, register
from .surface import ends_with_question_mark, lower_words, norm
from .tree import base_rel, children, has_rel, is_aux, low, subtree, word_tokens
from .words import AUX_FORMS, WH_WORDS, read_word_file
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
#
# Recall first (App. C errs on the side of over-filtering; BABY and BABY-F stay size-matched): the
# union of App. C's own test on the parse and three surface analyses of the clause types UD annotates
# as ``acl:relcl`` but a parser trained on another scheme often does not. Every cue is a general
# structural pattern over closed word classes and tags; none has a part fitted to data.

# Nominative pronouns that can open a relative clause's subject; "your" is CHILDES orthography for
# "you're" as often as a possessive, so it may open a clause too.
SUBJECT_PRONOUNS = frozenset("i you he she we they it your ya".split())
# Determiners: the word after one heads a noun phrase whatever the tagger calls it.
DETERMINERS = frozenset(
    "the a an this that these those my your his her its our their some any every no another each".split()
)
# Nominal heads that need no determiner and take zero or that-relatives.
BARE_NOMINALS = frozenset(
    """anything something everything nothing anyone someone everyone anybody somebody everybody nobody
    all one ones else""".split()
)
# Relativizers after a noun.
RELATIVIZERS = frozenset("that who which whom whose".split())
# Wh-words of free relatives and of "that's what/where/why ..." clauses, which UD annotates as
# acl:relcl on the wh-word. when/how clauses are adverbial (advcl) or manner complements in UD.
FREE_WH = frozenset("what whatever who whoever whom where wherever why".split())
# Wh-words that can be a free relative's own subject ("what happens", "whoever wins").
SUBJECT_WH = frozenset("what whatever who whoever".split())
# Free relatives of place and time: UD annotates "go where it goes" and "from when you were small" as
# acl:relcl on the wh-word; "know where it is" (a verb that embeds questions) is a complement (ccomp).
PLACE_TIME_WH = frozenset("where wherever when whenever".split())
# The verbs that embed a wh-clause (the one list, shared with the constructions' binding patterns; its path
# is in the filter rule's code hash).
EMBEDDING_VERBS = frozenset(read_word_file("wh_clause_heads.txt")) - {"be"}
# Forms of "be" that open a cleft ("is it ... that", "it was ... who").
BE_FORMS = frozenset("is 's was were are 're am 'm be".split())
# The pronouns a cleft focuses ("it's you that ...") and the cleft's own it/that/this ("what is it you ...").
CLEFT_SUBJECTS = frozenset("it that this".split())
FOCUS_PRONOUNS = frozenset("me you him her us them it i he she we they this that".split())
# Verbs of a final parenthetical ("..., you know", "..., I guess"): a pronoun + one of these ending
# the utterance is a comment clause, not a relative.
PARENTHETICALS = frozenset("know think guess wonder see mean bet suppose say".split())


def _verbal(t: Token) -> bool:
    """A verb or auxiliary by UPOS or Penn tag, or a progressive the tagger called a noun (-ing)."""
    if t.upos in ("VERB", "AUX") or t.xpos.startswith(("VB", "MD")):
        return True
    f = low(t)
    return len(f) > 4 and f.endswith("ing") and t.upos in ("NOUN", "ADJ")


def _finite(t: Token) -> bool:
    """A finite verb or auxiliary by Penn tag (3rd/non-3rd present, past, modal)."""
    return t.xpos in ("VBZ", "VBP", "VBD", "MD") or (t.upos == "AUX" and t.xpos not in ("VB", "VBG", "VBN"))


def _nominal(ws: list[Token], i: int) -> bool:
    """``ws[i]`` can head a noun phrase: a noun, name or number by tag, an indefinite pronoun, or any
    word right after a determiner (a noun the tagger read as a verb)."""
    t = ws[i]
    if t.upos in ("NOUN", "PROPN", "NUM") or t.xpos.startswith("NN") or low(t) in BARE_NOMINALS:
        return True
    # "the/that + base verb": a noun tagged as a verb ("that bark"); "that + 3rd-person verb" is a
    # pronoun subject and its verb ("that means")
    return i > 0 and low(ws[i - 1]) in DETERMINERS and (t.upos == "X" or t.xpos in ("VB", "VBP"))


def _subject_end(ws: list[Token], j: int) -> int | None:
    """Where a subject starting at ``ws[j]`` ends (exclusive): a personal pronoun, or an optional
    determiner, adjectives and a noun (compounds included); None if no subject starts there."""
    if j >= len(ws):
        return None
    det = low(ws[j]) in DETERMINERS
    # a possessive or demonstrative before a noun phrase determines it ("your friends and you"), although
    # "your" alone counts as a subject (CHILDES writes "you're" so: "your blowing", an -ing the tagger may
    # call a noun) and "that" alone is a pronoun subject
    np = _noun_phrase_end(ws, j + 1, True) if det else None
    if (np is None or _verbal(ws[np - 1])) and (
            low(ws[j]) in SUBJECT_PRONOUNS or (ws[j].upos == "PRON" and low(ws[j]) not in WH_WORDS)):
        return j + 1
    return _noun_phrase_end(ws, j + det, det)


def _noun_phrase_end(ws: list[Token], k: int, det: bool) -> int | None:
    """Where adjectives and a noun (compounds included) starting at ``ws[k]`` end (exclusive); after a
    determiner (``det``) a bare nominal ("the one") heads it too."""
    while k < len(ws) and ws[k].upos == "ADJ":
        k += 1
    if k < len(ws) and (ws[k].upos in ("NOUN", "PROPN") or ws[k].xpos.startswith("NN")
                        or (det and low(ws[k]) in BARE_NOMINALS)):
        while k + 1 < len(ws) and ws[k + 1].upos in ("NOUN", "PROPN"):
            k += 1
        return k + 1
    return None


def _clause_at(ws: list[Token], j: int, span: int = 3) -> tuple[int, int] | None:
    """A clause in declarative order starting at ``ws[j]``: a subject, then a verb among the next
    ``span`` words. Returns (subject index, verb index)."""
    e = _subject_end(ws, j)
    if e is None:
        return None
    for k in range(e, min(len(ws), e + span)):
        if _verbal(ws[k]):
            return j, k
    return None


def _inverted_after(ws: list[Token], i: int) -> bool:
    """``ws[i]`` (a wh-word or relativizer), an optional noun, then an auxiliary and a subject: the
    word order of a question, never of a relative clause."""
    j = i + 1
    if j < len(ws) and ws[j].upos in ("NOUN", "PROPN", "ADJ") and low(ws[i]) in WH_WORDS:
        j += 1
    return j + 1 < len(ws) and ws[j].upos == "AUX" and _subject_end(ws, j + 1) is not None


def qf_conservative_relcl(sent: Sentence) -> tuple[Token, ...] | None:
    """App. C's own test on the parse: some ``nsubj`` before some ``acl:relcl`` (the literal rule,
    so conservative mode removes everything ``posh`` removes on the same parse)."""
    subj = next((t for t in sent.tokens if base_rel(t) == "nsubj"), None)
    if subj is None:
        return None
    rel = next((t for t in sent.tokens if has_rel(t, "acl:relcl") and t.id > subj.id), None)
    return (subj, rel) if rel is not None else None


def qf_conservative_wh_clause(sent: Sentence) -> tuple[Token, ...] | None:
    """A free relative: a wh-word followed by a clause in declarative order (subject, then verb), or
    a *what/whatever/who/whoever* directly followed by a finite verb (the clause's own subject).

    UD annotates these ("that's what she likes", "put it where it goes") as ``acl:relcl`` on the
    wh-word. Not counted: the wh-word of a question (inverted order after it, or the first word of
    an utterance ending in "?": an auxiliary-less question), and a wh-clause that is a verb's
    complement (after a verb, or a verb and its pronoun object: an embedded question, UD ``ccomp``).
    """
    ws = word_tokens(sent)
    question = ends_with_question_mark(sent.text)
    for i, t in enumerate(ws):
        if (low(t) not in FREE_WH and low(t) not in PLACE_TIME_WH) or _inverted_after(ws, i):
            continue
        if question and all(low(w) == low(t) or w.upos == "INTJ" for w in ws[:i]):
            continue  # the question's own wh-word (after interjections or a repetition of itself)
        prev = ws[i - 1] if i else None
        if low(t) not in FREE_WH and not _place_time_relative(ws, i):
            continue  # when: an adverbial clause (UD advcl), unless a preposition makes it a free relative
        if prev is not None and (prev.upos == "VERB" or (prev.upos == "PRON" and i >= 2 and ws[i - 2].upos == "VERB")) \
                and not (low(t) in PLACE_TIME_WH and _place_time_relative(ws, i)):
            continue  # a verb's embedded question, unless where follows a verb that embeds none
        c = _clause_at(ws, i + 1)
        if c is not None:
            return Hit((t, ws[c[0]], ws[c[1]]), "qf_conservative_wh_clause")
        # the wh-word as the relative clause's own subject ("that's what happens"): a finite verb right
        # after it, the wh-word not opening the utterance, nor right after a vocative
        if (low(t) in SUBJECT_WH and i + 1 < len(ws) and _finite(ws[i + 1]) and not _opening(ws, i)):
            return Hit((t, ws[i + 1]), "qf_conservative_wh_clause")
    return None


def _place_time_relative(ws: list[Token], i: int) -> bool:
    """*where/when* at ``ws[i]`` opens a free relative of place or time, not an embedded question nor an
    adverbial clause: *where* after a verb that embeds no question (or after that verb's pronoun object),
    *when/where* after a preposition."""
    prev = ws[i - 1] if i else None
    if prev is None:
        return False
    if prev.upos == "ADP" or prev.xpos == "IN":
        return True
    if low(ws[i]) not in ("where", "wherever"):
        return False
    verb = ws[i - 2] if prev.upos == "PRON" and i >= 2 else prev
    return verb.upos == "VERB" and (verb.lemma or "").lower() not in EMBEDDING_VERBS \
        and low(verb) not in EMBEDDING_VERBS


def _opening(ws: list[Token], i: int) -> bool:
    """Only interjections, conjunctions and at most one vocative (a name, a noun or a capitalised word)
    stand before ``ws[i]``."""
    rest = [w for w in ws[:i] if w.upos not in ("INTJ", "CCONJ")]
    return len(rest) == 0 or (len(rest) == 1 and (rest[0].upos in ("PROPN", "NOUN") or rest[0].form[:1].isupper()))


def qf_conservative_zero_relative(sent: Sentence) -> tuple[Token, ...] | None:
    """A noun phrase (not the utterance's first word, which may be a vocative) directly followed by
    a clause with a pronoun subject, or a name and a finite verb: a relative without a relativizer."""
    ws = word_tokens(sent)
    for i in range(1, len(ws) - 1):
        if not _nominal(ws, i):
            continue
        if low(ws[i + 1]) in SUBJECT_PRONOUNS:
            c = _clause_at(ws, i + 1)
        elif ws[i + 1].upos == "PROPN" and ws[i].upos != "PROPN":
            e = _subject_end(ws, i + 1)  # a name subject ("the one Grandpa built"): its verb must be finite
            c = (i + 1, e) if e is not None and e < len(ws) and _finite(ws[e]) else None
        else:
            continue
        if c is None:
            continue
        if c[1] == len(ws) - 1 and c[1] == c[0] + 1 and low(ws[c[1]]) in PARENTHETICALS:
            continue  # a final comment clause ("..., you know")
        if all(w.upos == "INTJ" for w in ws[:i]) and ws[i].upos in ("PROPN", "NOUN"):
            continue  # a vocative: a bare name or noun after nothing but interjections
        v = c[1]
        if ws[v].upos == "AUX" and (v + 1 >= len(ws) or not (_verbal(ws[v + 1]) or ws[v + 1].upos in ("ADV", "PART"))):
            continue  # pronoun + copula + a predicate: a second main clause run on, not a relative
        return Hit((ws[i], ws[c[0]], ws[c[1]]), "qf_conservative_zero_relative")
    return None


def qf_conservative_relativizer(sent: Sentence) -> tuple[Token, ...] | None:
    """A noun phrase, and an adverb or none, followed by *that/who/which/whom/whose* and a verb within four
    words (a relative clause the parser attached elsewhere); not a determiner *that* before a noun, not an
    inverted question after a vocative. The noun phrase may open the utterance (a noun and its relative
    said alone) unless the utterance ends with "?" (a vocative and a wh-question)."""
    ws = word_tokens(sent)
    question = ends_with_question_mark(sent.text)
    for i in range(1, len(ws) - 1):
        t = ws[i]
        if low(t) not in RELATIVIZERS:
            continue
        np = i - 1 - (ws[i - 1].upos == "ADV" and i >= 2)
        if not _nominal(ws, np) or (np == 0 and question):
            continue
        if low(t) == "that" and ws[i + 1].upos in ("NOUN", "ADJ", "NUM"):
            continue
        if _inverted_after(ws, i):
            continue
        k = next((k for k in range(i + 1, min(len(ws), i + 5)) if _verbal(ws[k])), None)
        if k is not None:
            return Hit((ws[np], t, ws[k]), "qf_conservative_relativizer")
    return None


def _relative_after(ws: list[Token], j: int, zero: bool) -> tuple[int, ...] | None:
    """A relative clause starting at ``ws[j]``: *that/who/which* then a clause or a verb, or (``zero``) a
    clause with a subject and a finite verb right away (not a final comment clause such as "..., I think").
    Returns the indices of its cue words."""
    if j >= len(ws):
        return None
    if low(ws[j]) in ("that", "who", "which"):
        c = _clause_at(ws, j + 1)
        if c is not None:
            return (j, c[0], c[1])
        if j + 1 < len(ws) and _verbal(ws[j + 1]):
            return (j, j + 1)
        return None
    c = _clause_at(ws, j) if zero else None
    if c is None or not _finite(ws[c[1]]):
        return None
    v = c[1]
    if v == len(ws) - 1 and low(ws[v]) in PARENTHETICALS:
        return None
    k = v + 1
    while k < len(ws) and low(ws[k]) in ("not", "n't"):
        k += 1
    if ws[v].upos == "AUX" and k == len(ws) - 1 and ws[k].upos == "PRON":
        return None  # a tag question (..., isn't it): an auxiliary and a pronoun closing the utterance
    if ws[v].upos == "AUX" and (v + 1 >= len(ws) or not (_verbal(ws[v + 1]) or ws[v + 1].upos in ("ADV", "PART"))):
        return None  # a copula and its predicate, or a tag question's inverted auxiliary: a main clause
    return c


def qf_conservative_cleft(sent: Sentence) -> Hit | None:
    """An it-cleft whose relative clause hangs on a pronoun (UD: the pronoun + ``acl:relcl``), which a parser
    reads as a complement clause: a form of *be* and *it/that/this* (either order) followed by a zero or a
    *that/who* relative, or *it* + *be* (+ *not*) + a pronoun + a relative."""
    ws = word_tokens(sent)
    for i in range(len(ws) - 2):
        a, b = low(ws[i]), low(ws[i + 1])
        if (a in BE_FORMS and b in CLEFT_SUBJECTS) or (a in CLEFT_SUBJECTS and b in BE_FORMS):
            j = i + 2
            while j < len(ws) and low(ws[j]) in ("not", "n't"):
                j += 1
            got = _relative_after(ws, j, zero=True)
            if got is not None:
                return Hit(tuple(ws[k] for k in (i, i + 1) + got), "qf_conservative_cleft")
            # it + be + a focused pronoun + a relative ("it's you that ...")
            if a == "it" and j < len(ws) and low(ws[j]) in FOCUS_PRONOUNS:
                got = _relative_after(ws, j + 1, zero=True)
                if got is not None:
                    return Hit(tuple(ws[k] for k in (i, j) + got), "qf_conservative_cleft")
    return None


def qf_conservative_extraposed(sent: Sentence) -> Hit | None:
    """A relative clause extraposed after the verb of a wh-question (its antecedent the wh-word): the
    utterance opens with *what/who* (after interjections, conjunctions or adverbs), and later *that/who/
    which*, right after a verb, particle or adverb, is the relative's own subject: a finite verb follows it,
    and a predicate follows that verb. Not after a verb of saying or thinking (a complement clause)."""
    ws = word_tokens(sent)
    w = next((k for k, t in enumerate(ws) if t.upos not in ("INTJ", "CCONJ", "ADV")), None)
    if w is None or low(ws[w]) not in ("what", "who", "whatever", "whoever"):
        return None
    for i in range(w + 3, len(ws) - 2):
        if low(ws[i]) not in ("that", "who", "which"):
            continue
        prev = ws[i - 1]
        if not (_verbal(prev) or prev.upos in ("ADV", "PART", "ADP")):
            continue
        verb = next((ws[k] for k in range(i - 1, w, -1) if _verbal(ws[k])), None)
        if verb is not None and ((verb.lemma or "").lower() in PARENTHETICALS or low(verb) in PARENTHETICALS):
            continue
        if _finite(ws[i + 1]) or low(ws[i + 1]) in AUX_FORMS:
            return Hit((ws[w], ws[i], ws[i + 1]), "qf_conservative_extraposed")
    return None


def conservative_interrogative(sent: Sentence) -> bool:
    """App. C (ii) by form: final "?", a wh-word anywhere, or an auxiliary form among the first two
    words whatever the tagger calls it (the surface pre-test's own condition)."""
    ws = word_tokens(sent)
    return (ends_with_question_mark(sent.text) or any(low(t) in WH_WORDS for t in ws)
            or any(low(t) in AUX_FORMS for t in ws[:2]))


CONSERVATIVE_CUES = (qf_conservative_relcl, qf_conservative_wh_clause, qf_conservative_zero_relative,
                     qf_conservative_relativizer, qf_conservative_cleft, qf_conservative_extraposed)


def qf_conservative(sent: Sentence, ctx: Context):
    """App. C's interrogative test AND a relative clause found by any of six analyses (module docstring)."""
    if len(word_tokens(sent)) < 3 or not conservative_interrogative(sent):
        return None
    for cue in CONSERVATIVE_CUES:
        hit = cue(sent)
        if hit:
            return hit if isinstance(hit, Hit) else Hit(hit, cue.__name__)
    return None


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
