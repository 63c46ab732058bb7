"""Matching a declarative construction on a UD tree: spaCy's DependencyMatcher plus a post-filter.

Every tree — a gold CoNLL-U sentence or a parser's output, both :class:`~povstim.parse.conllu.Sentence`
— becomes a spaCy ``Doc`` built from its columns (words, heads, deprels, UPOS, XPOS, lemmas, feats), so
gold and parsed trees go through the same code. A pattern's positive part (its nodes' attributes and a
spanning tree of its relations) is a ``DependencyMatcher`` pattern; what the matcher cannot express is a
post-filter over its matches, in Python, with the same meaning:

- negative conditions (``absent``: no token so related to a node with these constraints; a node's
  ``not:`` constraints) — the DependencyMatcher has no negation;
- relations beyond the spanning tree (the matcher joins each node to one earlier node; a second
  relation between two placed nodes, e.g. a linear order between two dependents, is checked after);
- ``agree`` / ``disagree`` between two nodes' UD features (:func:`spec.agreement`): the matcher compares a
  token with constants only.

spaCy is imported the first time a construction runs, never when the registry is read.
"""

from __future__ import annotations

import hashlib
import json
import re

from ..parse.conllu import Sentence, Token
from . import fastmatch
from .spec import Construction, Node, Pattern, agreement, norm, spanning_order

_VOCAB = None
_LAST: tuple = (None, None)  # (sentence, its Doc): every construction and mode of one sentence share it
_MATCHERS: dict = {}
_FAST: dict = {}
_FAST_PATTERNS: dict = {}
ENGINES = ("compiled", "spacy")


def vocab():
    global _VOCAB
    if _VOCAB is None:
        from spacy.vocab import Vocab

        _VOCAB = Vocab()
    return _VOCAB


def to_doc(sent: Sentence):
    """The sentence as a spaCy Doc (cached for the last sentence asked: the rules of every construction
    and mode run on one sentence before the next)."""
    global _LAST
    if _LAST[0] is sent:
        return _LAST[1]
    from spacy.tokens import Doc

    c = fastmatch.columns(sent)  # the same normalization the compiled matcher reads
    doc = Doc(vocab(), words=c["words"], spaces=[True] * len(c["words"]), heads=c["heads"], deps=c["deps"],
              pos=c["pos"], tags=c["tags"], lemmas=c["lemmas"], morphs=c["morphs"])
    for tok, x in zip(doc, c["norms"]):
        tok.norm_ = x
    _LAST = (sent, doc)
    return doc


def _has_rel(dep: str, rels) -> bool:
    return any(dep == r or dep.startswith(r + ":") for r in rels)


def token_attrs(node: Node) -> dict:
    """The DependencyMatcher RIGHT_ATTRS of a node's positive constraints."""
    out: dict = {}
    a = node.attrs
    if "form" in a:
        out["NORM"] = {"IN": sorted(a["form"])}
    if "lemma" in a:
        out["LEMMA"] = {"IN": sorted(a["lemma"])}
    if "upos" in a:
        out["POS"] = {"IN": sorted(a["upos"])}
    if "xpos" in a:
        out["TAG"] = {"IN": sorted(a["xpos"])}
    if "deprel_exact" in a:
        out["DEP"] = {"IN": sorted(a["deprel_exact"])}
    if "deprel" in a and "DEP" not in out:  # with deprel_exact too, the exact one decides here
        alts = "|".join(re.escape(r) for r in sorted(a["deprel"]))
        out["DEP"] = {"REGEX": f"^(?:{alts})(?::.*)?$"}  # the relation or one of its subtypes
    if "feats" in a and all(len(v) == 1 for v in a["feats"].values()):
        out["MORPH"] = {"IS_SUPERSET": sorted(f"{f}={next(iter(v))}" for f, v in a["feats"].items())}
    return out


def satisfies(tok, attrs: dict) -> bool:
    """Does the Doc token meet every constraint of ``attrs`` (the post-filter's reading of a node)?"""
    for k, vals in attrs.items():
        if k == "form" and tok.norm_ not in vals:
            return False
        if k == "lemma" and tok.lemma_ not in vals:
            return False
        if k == "upos" and tok.pos_ not in vals:
            return False
        if k == "xpos" and tok.tag_ not in vals:
            return False
        if k == "deprel_exact" and tok.dep_ not in vals:
            return False
        if k == "deprel" and not _has_rel(tok.dep_, vals):
            return False
        if k == "feats":
            for f, want in vals.items():
                if not set(tok.morph.get(f)) & want:
                    return False
    return True


def violates_not(tok, nots: dict) -> bool:
    """A ``not:`` constraint holds of the token (any one of its attributes matches)."""
    for k, vals in nots.items():
        if satisfies(tok, {k: vals}):
            return True
    return False


def node_ok(tok, node: Node) -> bool:
    return satisfies(tok, node.attrs) and not violates_not(tok, node.nots)


def related(a, op: str, b) -> bool:
    """``a op b`` with the DependencyMatcher's meaning of ``op``."""
    if a.i == b.i:
        return False
    if op == ">":
        return b.head.i == a.i and b.head.i != b.i
    if op == "<":
        return a.head.i == b.i and a.head.i != a.i
    if op == ">>":
        return any(x.i == a.i for x in b.ancestors)
    if op == "<<":
        return any(x.i == b.i for x in a.ancestors)
    if op == ".":
        return b.i == a.i + 1
    if op == ".*":
        return a.i < b.i
    if op == ";":
        return b.i == a.i - 1
    if op == ";*":
        return a.i > b.i
    sib = a.head.i == b.head.i and a.head.i not in (a.i, b.i)
    if op == "$+":
        return sib and b.i == a.i + 1
    if op == "$-":
        return sib and b.i == a.i - 1
    if op == "$++":
        return sib and b.i > a.i
    if op == "$--":
        return sib and b.i < a.i
    raise ValueError(op)


def feature_values(tok, feats: tuple[str, ...]) -> tuple[frozenset, ...]:
    """The Doc token's values of each feature (an empty set for a feature it lacks)."""
    return tuple(frozenset(tok.morph.get(f)) for f in feats)


class CompiledPattern:
    def __init__(self, pat: Pattern):
        from spacy.matcher import DependencyMatcher

        self.pat = pat
        edges, self.rest = spanning_order(pat)
        first = pat.nodes[0]
        dm = [{"RIGHT_ID": first.name, "RIGHT_ATTRS": token_attrs(first)}]
        for a, op, b in edges:
            dm.append({"LEFT_ID": a, "REL_OP": op, "RIGHT_ID": b, "RIGHT_ATTRS": token_attrs(pat.node(b))})
        self.order = [first.name] + [b for _, _, b in edges]  # the matcher reports token ids in this order
        self.matcher = DependencyMatcher(vocab())
        self.matcher.add(pat.name, [dm])

    def find(self, doc) -> dict[str, int] | None:
        """The first match (by token positions) that passes the post-filter: node -> token index."""
        found = sorted(tuple(ids) for _, ids in self.matcher(doc))
        for ids in found:
            at = dict(zip(self.order, ids))
            if len(set(ids)) != len(ids):
                continue
            if not all(node_ok(doc[at[n.name]], n) for n in self.pat.nodes):
                continue
            if not all(related(doc[at[a]], op, doc[at[b]]) for a, op, b in self.rest):
                continue
            if any(any(t.i != at[x] and related(doc[at[x]], op, t) and node_ok(t, node) for t in doc)
                   for x, op, node in self.pat.absent):
                continue
            if not all(agreement(feature_values(doc[at[a]], fs), feature_values(doc[at[b]], fs), same)
                       for same, rules in ((True, self.pat.agree), (False, self.pat.disagree))
                       for a, b, fs in rules):
                continue
            return at
        return None


def compiled(pat: Pattern) -> CompiledPattern:
    key = id(pat)
    got = _MATCHERS.get(key)
    if got is None or got.pat is not pat:
        got = _MATCHERS[key] = CompiledPattern(pat)
    return got


def fast_patterns(c: Construction, mode: str) -> list[fastmatch.FastPattern]:
    """The mode's patterns compiled, once per construction object (a re-read definition is a new one)."""
    key = (id(c), mode)
    got = _FAST_PATTERNS.get(key)
    if got is None or got[0] is not c:
        got = _FAST_PATTERNS[key] = (c, [fastmatch.FastPattern(p) for p in c.patterns[mode]])
    return got[1]


def matcher(c: Construction, mode: str):
    """``sent -> (pattern name, tokens) | None`` for one construction and mode: a :class:`fastmatch.Plan`
    of its patterns alone (what ``find_dpe`` runs for all constructions at once); the DependencyMatcher
    path for a tree with a head cycle."""
    plan = fastmatch.Plan([(c.name, fast_patterns(c, mode))])

    def run(sent: Sentence):
        if not sent.tokens:
            return None
        try:
            return plan.run(sent).get(c.name)
        except fastmatch.HeadCycle:
            return match(c, mode, sent, engine="spacy")

    return run


def match(c: Construction, mode: str, sent: Sentence,
          engine: str = "compiled") -> tuple[str, tuple[Token, ...]] | None:
    """(pattern name, the matched tokens in node order) of the first pattern of ``mode`` that matches.

    ``engine``: ``compiled`` (:mod:`.fastmatch` via :func:`matcher`, what the rules run: the same
    matches, much faster) or ``spacy`` (the DependencyMatcher over a Doc: the reference the compiled
    matcher is tested against, and the fallback for a tree with a head cycle)."""
    if engine == "compiled":
        key = (id(c), mode)
        got = _FAST.get(key)
        if got is None or got[0] is not c:
            got = _FAST[key] = (c, matcher(c, mode))
        return got[1](sent)
    if engine != "spacy":
        raise ValueError(f"unknown matcher engine {engine!r}; known: {', '.join(ENGINES)}")
    if not sent.tokens:
        return None
    doc = to_doc(sent)
    for pat in c.patterns[mode]:
        at = compiled(pat).find(doc)
        if at is not None:
            return pat.name, tuple(sent.tokens[at[n.name]] for n in pat.nodes)
    return None


# ------------------------------------------------------------------------------ surface pre-test

# The forms of closed-class lemmas, so a pattern that names a lemma still gives the pre-test words.
LEMMA_FORMS = {
    "be": "be am is are was were been being 's 're 'm ai isn't aren't wasn't weren't ain't",
    "have": "have has had having 've 'd haven't hasn't hadn't",
    "do": "do does did doing done don't doesn't didn't",
    "there": "there", "a": "a an", "an": "a an", "not": "not n't never",
    "this": "this these", "that": "that those", "these": "this these", "those": "that those",
}


def node_forms(node: Node) -> frozenset | None:
    """Word forms one of which the node's token must have (None: the node constrains no form)."""
    if "form" in node.attrs:
        return node.attrs["form"]
    lem = node.attrs.get("lemma")
    if lem and all(x in LEMMA_FORMS for x in lem):
        return frozenset(w for x in lem for w in LEMMA_FORMS[x].split())
    return None


def pattern_requirements(pat: Pattern) -> list[frozenset]:
    """The pre-test of one pattern: for each node that names its forms, one of them must occur."""
    return [f for f in (node_forms(n) for n in pat.nodes) if f is not None]


def surface_spec(c: Construction) -> list[list[list[str]]]:
    """Every mode's patterns' requirements (a sentence passes when one pattern's all hold)."""
    seen, out = set(), []
    for m in sorted(c.patterns):
        for pat in c.patterns[m]:
            req = sorted(sorted(r) for r in pattern_requirements(pat))
            key = json.dumps(req)
            if key not in seen:
                seen.add(key)
                out.append(req)
    return sorted(out)


def make_surface(spec: list[list[list[str]]]):
    """The pre-test as a function of (tokens, text): necessary for every mode's rule by construction."""
    reqs = [[frozenset(r) for r in pat] for pat in spec]

    def surface(words: list[str], text: str) -> bool:
        lw = {norm(w) for w in words}
        return any(all(r & lw for r in pat) for pat in reqs)

    return surface


def fingerprint(c: Construction) -> str:
    """A hash of what decides the construction's matches (resolved word lists included)."""
    def attrs(a: dict):
        return {k: (sorted(v) if not isinstance(v, dict) else {f: sorted(x) for f, x in sorted(v.items())})
                for k, v in sorted(a.items())}

    def node(n: Node):
        return attrs(n.attrs), attrs(n.nots)

    def pattern(p: Pattern):
        out = [p.name, [(n.name, node(n)) for n in p.nodes], list(p.relations),
               [(a, op, node(x)) for a, op, x in p.absent]]
        if p.agree or p.disagree:  # only then: the fingerprints of patterns without them stay as they were
            out.append({"agree": [list(r) for r in p.agree], "disagree": [list(r) for r in p.disagree]})
        return out
    data = {m: [pattern(p) for p in pats] for m, pats in sorted(c.patterns.items())}
    data["sanity"] = [sorted(c.sanity_forms or ()), c.sanity_surface]
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]
