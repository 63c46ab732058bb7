"""A compiled matcher for declarative patterns: spaCy's DependencyMatcher search, in Python, over the parse rows.

Why: the DependencyMatcher path (:mod:`.match`: a spaCy ``Doc`` per sentence, one matcher per pattern)
costs ~40 µs per construction and sentence, almost all of it inside the matcher's generic machinery (a
token ``Matcher`` run over the whole Doc per pattern, Token objects created for every relation lookup);
matching 20 constructions would cost ~30x App. C's two Python rules. This module answers the same
question from the rows themselves:

1. a **structural pre-test** derived from the pattern: every node's positive constraints name values
   (a form, a lemma, a UPOS, a relation or one of its subtypes, a feature) one of which some token of
   the sentence must carry. A :class:`Plan` compiles every construction of a filter run together: each
   set of values a node check names is a bit, each distinct token row maps once to the bits it meets,
   and a pattern whose required bits are not all in the sentence's OR cannot match — most patterns of
   most sentences stop here without looking at a token;
2. otherwise a backtracking **search** with the DependencyMatcher's semantics: nodes placed in its
   order (:func:`spec.spanning_order`), candidates in ascending token order, each spanning edge with
   the meaning spaCy's operator implementation gives it (``$+`` etc. take the children of the token's
   head, so a root's own dependents count as its siblings), every node of a match in one tree (spaCy
   groups matches by root), then the post-filter of :mod:`.match` (distinct tokens, the relations
   beyond the spanning tree, ``absent``, ``agree``/``disagree`` by :func:`spec.agreement`) with
   :func:`match.related`'s meaning. The first match in
   ascending token order is the DependencyMatcher path's first match: the same tokens, the same pattern.

The DependencyMatcher path stays the reference (``match.match(..., engine="spacy")``), and the fallback for
a tree this module does not take (a head cycle). ``tests/test_constructions_fastmatch.py`` checks that both
give the same match (pattern and tokens) for every construction, mode and sentence on thousands of real
spaCy parses and gold trees.
"""

from __future__ import annotations

from functools import reduce
from operator import attrgetter, or_

from ..parse.conllu import Sentence, Token
from .spec import Pattern, agreement, norm, spanning_order

# UPOS values spaCy knows; anything else (a "_" in a gold file) becomes X, as in the Doc.
UPOS = frozenset("ADJ ADP ADV AUX CCONJ DET INTJ NOUN NUM PART PRON PROPN PUNCT SCONJ SYM VERB X".split())


def morph(feats: str) -> str:
    """The FEATS column as the Doc's morph string (pairs with a value, sorted)."""
    if feats in ("", "_"):
        return ""
    ok = [kv for kv in feats.split("|") if "=" in kv and kv.split("=", 1)[1]]
    return "|".join(sorted(ok))


def row(t: Token) -> tuple[str, str, str, str, str, str]:
    """(norm, lemma, UPOS, XPOS, deprel, morph) of a token as the Doc holds them."""
    return (norm(t.form), t.lemma.lower() if t.lemma not in ("", "_") else "", t.upos if t.upos in UPOS else "X",
            t.xpos if t.xpos not in ("", "_") else "", t.deprel if t.deprel not in ("", "_") else "dep",
            morph(t.feats))


def heads(sent: Sentence) -> list[int]:
    """Each token's head as a 0-based index; a root (or a head outside the sentence) is its own head."""
    n = len(sent.tokens)
    return [t.head - 1 if 0 < t.head <= n else i for i, t in enumerate(sent.tokens)]


def columns(sent: Sentence) -> dict[str, list]:
    """The sentence's columns as the Doc holds them: one normalization for both matchers."""
    rows = [row(t) for t in sent.tokens]
    out = {k: [r[j] for r in rows] for j, k in enumerate(("norms", "lemmas", "pos", "tags", "deps", "morphs"))}
    out["words"] = [t.form for t in sent.tokens]
    out["heads"] = heads(sent)
    return out


def token_atoms(form, lemma, pos, tag, dep, mor) -> frozenset:
    """What one token offers the constraints, as strings: f:form l:lemma u:UPOS x:XPOS d:deprel (exact),
    r:every relation the deprel is or is a subtype of (acl, acl:relcl), m:Feature=Value."""
    out = {"f:" + form, "l:" + lemma, "u:" + pos, "x:" + tag, "d:" + dep}
    parts = dep.split(":")
    for k in range(1, len(parts) + 1):
        out.add("r:" + ":".join(parts[:k]))
    if mor:
        for kv in mor.split("|"):
            f, v = kv.split("=", 1)
            out.update(f"m:{f}={x}" for x in v.split(","))
    return frozenset(out)


# Token rows repeat (Zipf): their atoms are computed once per distinct row (bounded, cleared when full).
_ATOMS: dict[tuple, frozenset] = {}
_ATOMS_MAX = 100_000  # ~1 KB a row: at most ~100 MB per cache, and a corpus's frequent rows stay in it


def clear_caches() -> None:
    _ATOMS.clear()
    _FEATURES.clear()


# A FEATS column's feature -> values (what ``agree`` compares), once per distinct column string.
_FEATURES: dict[str, dict[str, frozenset]] = {}


def feature_map(feats: str) -> dict[str, frozenset]:
    """Feature -> its set of values, as the Doc's ``morph.get`` gives them (:func:`morph`'s reading)."""
    got = _FEATURES.get(feats)
    if got is None:
        if len(_FEATURES) >= _ATOMS_MAX:
            _FEATURES.clear()
        mor = morph(feats)
        got = _FEATURES[feats] = {f: frozenset(v.split(",")) for f, v in (kv.split("=", 1) for kv in mor.split("|"))
                                  } if mor else {}
    return got


def feature_values(t: Token, feats: tuple[str, ...]) -> tuple[frozenset, ...]:
    """The token's values of each feature (an empty set for one it lacks): ``match.feature_values``'s answer."""
    fm = feature_map(t.feats)
    return tuple(fm.get(f, frozenset()) for f in feats)


ROW_KEY = attrgetter("form", "lemma", "upos", "xpos", "feats", "deprel")  # what a token's atoms depend on


def atoms(t: Token) -> frozenset:
    key = ROW_KEY(t)
    got = _ATOMS.get(key)
    if got is None:
        if len(_ATOMS) >= _ATOMS_MAX:
            _ATOMS.clear()
        got = _ATOMS[key] = token_atoms(*row(t))
    return got


_PREFIX = {"form": "f:", "lemma": "l:", "upos": "u:", "xpos": "x:", "deprel_exact": "d:", "deprel": "r:"}


def attr_groups(attrs: dict) -> tuple[tuple[frozenset, ...], ...]:
    """A node's constraints as groups of atom sets: a token meets a group when it has an atom of every set
    of it. Each attribute is one group (``feats``: one set per feature, all of which must hold)."""
    out = []
    for k, vals in sorted(attrs.items()):
        if k == "feats":
            out.append(tuple(frozenset(f"m:{f}={v}" for v in want) for f, want in sorted(vals.items())))
        else:
            out.append((frozenset(_PREFIX[k] + v for v in vals),))
    return tuple(out)


class HeadCycle(ValueError):
    """A tree this matcher does not take (the CoNLL-U reader refuses them; a Sentence built in code may not)."""


class Tree:
    """One sentence's rows, ready for every pattern: per-token atoms, heads, the tree each token is in,
    and the union of the atoms (the structural pre-test's input)."""

    __slots__ = ("_anc", "_features", "_kids", "_root", "atoms", "head", "n", "sent")

    def __init__(self, sent: Sentence, vals: list | None = None, head: list[int] | None = None):
        self.n = len(sent.tokens)
        self.sent = sent  # its FEATS, read only by an ``agree``/``disagree`` check
        # what the node checks read per token: its atoms, or a Plan's bits of the atom sets it meets
        self.atoms = vals if vals is not None else [atoms(t) for t in sent.tokens]
        self.head = head if head is not None else heads(sent)
        self._features: frozenset | None = None
        self._root: list[int] | None = None
        self._anc: dict[int, frozenset] = {}
        self._kids: list[list[int]] | None = None

    @property
    def features(self) -> frozenset:
        """Every atom of every token: what the structural pre-test checks a pattern's requirements against."""
        if self._features is None:
            self._features = frozenset().union(*self.atoms)
        return self._features

    def roots(self) -> list[int]:
        """The root of each token's tree (the DependencyMatcher matches within one tree only)."""
        if self._root is None:
            head, n = self.head, self.n
            root = [i if h == i else -1 for i, h in enumerate(head)]
            for i in range(n):
                path, j = [], i
                while root[j] < 0:
                    path.append(j)
                    j = head[j]
                    if len(path) > n:
                        raise HeadCycle(f"token {i + 1} is on a head cycle")
                for p in path:
                    root[p] = root[j]
            self._root = root
        return self._root

    def children(self) -> list[list[int]]:
        """Each token's dependents, ascending (a root is not its own dependent)."""
        if self._kids is None:
            kids: list[list[int]] = [[] for _ in range(self.n)]
            for t, h in enumerate(self.head):
                if h != t:
                    kids[h].append(t)
            self._kids = kids
        return self._kids

    def ancestors(self, i: int) -> frozenset:
        got = self._anc.get(i)
        if got is None:
            out, j = [], i
            while self.head[j] != j:
                j = self.head[j]
                out.append(j)
            got = self._anc[i] = frozenset(out)
        return got

    def edge(self, a: int, op: str, b: int) -> bool:
        """``a op b`` as spaCy's DependencyMatcher operators compute it (its spanning edges), for two
        distinct tokens of one tree."""
        h = self.head
        if op == ">":
            return h[b] == a
        if op == "<":
            return h[a] == b
        if op == ">>":
            return a in self.ancestors(b)
        if op == "<<":
            return b in self.ancestors(a)
        if op == ".":
            return b == a + 1
        if op == ".*":
            return b > a
        if op == ";":
            return b == a - 1
        if op == ";*":
            return b < a
        # siblings: the children of a's head (a root is its own head: its dependents are its "siblings")
        sib = h[b] == h[a] and b != h[a]
        if op == "$+":
            return sib and b == a + 1
        if op == "$-":
            return sib and b == a - 1
        if op == "$++":
            return sib and b > a
        if op == "$--":
            return sib and b < a
        raise ValueError(op)

    def related(self, a: int, op: str, b: int) -> bool:
        """``a op b`` with :func:`match.related`'s meaning (the post-filter's: no root-as-own-head sibling)."""
        if a == b:
            return False
        if op[0] == "$":
            h = self.head
            if h[a] != h[b] or h[a] in (a, b):
                return False
        return self.edge(a, op, b)


def node_ok(atoms: frozenset, pos, neg) -> bool:
    """The token meets every positive group and no ``not:`` group (a ``not:`` attribute is violated when
    the token meets all of its sets)."""
    for group in pos:
        for s in group:
            if atoms.isdisjoint(s):
                return False
    for group in neg:
        if all(not atoms.isdisjoint(s) for s in group):
            return False
    return True


def candidates(pos, neg):
    """``atoms list -> indices of the tokens that meet the node``, specialised for the common shapes (no
    constraint; one or two value sets and no ``not:``) so the loop makes no call per token."""
    sets = [s for group in pos for s in group]
    if not neg and not sets:
        return lambda atoms: list(range(len(atoms)))
    if not neg and len(sets) == 1:
        (a,) = sets
        return lambda atoms: [i for i, x in enumerate(atoms) if not x.isdisjoint(a)]
    if not neg and len(sets) == 2:
        a, b = sets
        return lambda atoms: [i for i, x in enumerate(atoms) if not x.isdisjoint(a) and not x.isdisjoint(b)]
    return lambda atoms: [i for i, x in enumerate(atoms) if node_ok(x, pos, neg)]


def _atom_check(pos, neg):
    return lambda atoms: node_ok(atoms, pos, neg)


def _masks(pos, neg, bit_of: dict[frozenset, int]) -> tuple[int, tuple[int, ...]]:
    """A node's checks as bit masks: every set of every positive group must be met (one mask), and a
    ``not:`` group is violated when all of its sets are met (one mask per group)."""
    need = 0
    for group in pos:
        for st in group:
            need |= 1 << bit_of[st]
    nots = []
    for group in neg:
        g = 0
        for st in group:
            g |= 1 << bit_of[st]
        nots.append(g)
    return need, tuple(nots)


def _bit_check(need: int, nots: tuple[int, ...]):
    return lambda b: b & need == need and all(b & g != g for g in nots)


def _bit_candidates(need: int, nots: tuple[int, ...]):
    if not nots:
        return lambda bits: [i for i, b in enumerate(bits) if b & need == need]
    return lambda bits: [i for i, b in enumerate(bits) if b & need == need and all(b & g != g for g in nots)]


class FastPattern:
    """One pattern, compiled: its pre-test, its nodes in the DependencyMatcher's order, its edges."""

    def __init__(self, pat: Pattern):
        self.pat = pat
        edges, rest = spanning_order(pat)
        self.order = [pat.nodes[0].name] + [b for _, _, b in edges]
        at = {name: k for k, name in enumerate(self.order)}
        nodes = [pat.node(name) for name in self.order]
        self.checks = [(attr_groups(n.attrs), attr_groups(n.nots)) for n in nodes]
        # edge of node k (k >= 1): (index of its earlier node, operator)
        self.edges = [None] + [(at[a], op) for a, op, _ in edges]
        self.rest = [(at[a], op, at[b]) for a, op, b in rest]
        self.absent = [(at[x], op, (attr_groups(n.attrs), attr_groups(n.nots))) for x, op, n in pat.absent]
        # (search index of A, of B, features, agree?) of every agree / disagree entry
        self.agree = [(at[a], at[b], fs, same) for same, rules in ((True, pat.agree), (False, pat.disagree))
                      for a, b, fs in rules]
        # the structural pre-test: every atom set of every node's positive constraints, rarest kinds first
        reqs = {s for pos, _ in self.checks for group in pos for s in group}
        self.requires = sorted(reqs, key=lambda s: ("flmdrxu".index(next(iter(s))[0]), sorted(s)))
        self.k = len(nodes)
        self._back = [at[n.name] for n in pat.nodes]  # the pattern's node order, from the search order
        self.cand_fns = [candidates(pos, neg) for pos, neg in self.checks]
        self.absent_ok = [(x, op, _atom_check(pos, neg)) for x, op, (pos, neg) in self.absent]

    def node_positions(self, ids: list[int]) -> list[int]:
        """The token indices of a match in the pattern's own node order."""
        return [ids[k] for k in self._back]

    def possible(self, tree: Tree) -> bool:
        """The structural pre-test: every required value is in the sentence (the rules run it inline)."""
        feats = tree.features
        for s in self.requires:
            if feats.isdisjoint(s):
                return False
        return True

    def find(self, tree: Tree) -> list[int] | None:
        """Token indices in :attr:`order` of the first match, or None."""
        return self.search(tree) if self.possible(tree) else None

    def search(self, tree: Tree, bound: tuple | None = None) -> list[int] | None:
        """:meth:`find` without the pre-test. ``bound``: (candidate functions, absent checks) over the
        tree's token values — a :class:`Plan`'s bit versions; None: this pattern's own, over atoms."""
        if tree.n < self.k:
            return None
        cand_fns, absent_ok = bound if bound is not None else (self.cand_fns, self.absent_ok)
        cands = []
        for f in cand_fns:
            c = f(tree.atoms)
            if not c:
                return None
            cands.append(c)
        if self.k == 1:
            return next(([i] for i in cands[0] if self._post(tree, [i], absent_ok)), None)
        root = tree.roots()
        if self.k == 2:  # most patterns: the same order as the general search, without its bookkeeping
            op = self.edges[1][1]
            for i in cands[0]:
                for j in cands[1]:
                    if j != i and root[j] == root[i] and tree.edge(i, op, j) and self._post(tree, [i, j], absent_ok):
                        return [i, j]
            return None
        return self._search(tree, cands, root, absent_ok)

    def _search(self, tree: Tree, cands: list[list[int]], root: list[int], absent_ok) -> list[int] | None:
        """Depth-first over the nodes in order, candidates ascending: matches in lexicographic order of
        their token positions, the order the DependencyMatcher path sorts its matches in."""
        k, at, pos = self.k, [0] * self.k, [0] * self.k
        j = 0
        while j >= 0:
            c = cands[j]
            placed = False
            while pos[j] < len(c):
                i = c[pos[j]]
                pos[j] += 1
                if j and (i in at[:j] or root[i] != root[at[0]]):
                    continue
                if j and not tree.edge(at[self.edges[j][0]], self.edges[j][1], i):
                    continue
                at[j] = i
                placed = True
                break
            if not placed:
                pos[j] = 0
                j -= 1
                continue
            if j + 1 < k:
                j += 1
                continue
            if self._post(tree, at, absent_ok):
                return list(at)
        return None

    def _post(self, tree: Tree, at: list[int], absent_ok) -> bool:
        """The post-filter of the DependencyMatcher path: relations beyond the spanning tree, ``absent``."""
        for a, op, b in self.rest:
            if not tree.related(at[a], op, at[b]):
                return False
        vals = tree.atoms
        for x, op, ok in absent_ok:
            ax = at[x]
            if op == ">":  # the common case (no dependent such that ...): the children only
                for t in tree.children()[ax]:
                    if ok(vals[t]):
                        return False
                continue
            for t in range(tree.n):
                if t != ax and tree.related(ax, op, t) and ok(vals[t]):
                    return False
        if self.agree:
            toks = tree.sent.tokens
            for a, b, fs, same in self.agree:
                if not agreement(feature_values(toks[at[a]], fs), feature_values(toks[at[b]], fs), same):
                    return False
        return True

    def bind(self, bit_of: dict[frozenset, int]) -> tuple:
        """The node checks over a :class:`Plan`'s token bits (``bit_of``: atom set -> its bit): candidate
        functions and absent checks, the same tests as over atoms."""
        return ([_bit_candidates(*_masks(pos, neg, bit_of)) for pos, neg in self.checks],
                [(x, op, _bit_check(*_masks(pos, neg, bit_of))) for x, op, (pos, neg) in self.absent])



class Plan:
    """Several constructions' patterns for one mode, compiled together so that one pass over a sentence's
    tokens answers all of them (the filter runs every construction on every sentence).

    Every distinct atom set any node check names (positive or ``not:``, of a node or of an ``absent``
    condition) is one bit; a token row maps, once per distinct row and straight from its values, to the
    bits of the sets it meets; a sentence's bits are the OR over its tokens, and a pattern is searched
    only when all the bits of its nodes' positive sets are set — the structural pre-test of
    :meth:`FastPattern.possible`, as integer arithmetic. The search then checks nodes on the same bits
    (:meth:`FastPattern.bind`): no atom strings are built for the rows of a corpus. The searches' result is
    kept per (token bits, heads): a sentence met again (CHILDES repeats many utterances) is not searched
    again."""

    def __init__(self, items: list[tuple[str, list[FastPattern]]]):
        bit_of: dict[frozenset, int] = {}
        for _, fps in items:
            for fp in fps:
                for pos, neg in fp.checks + [chk for _, _, chk in fp.absent]:
                    for group in pos + neg:
                        for st in group:
                            bit_of.setdefault(st, len(bit_of))
        self.items = []
        for name, fps in items:
            pats = []
            for fp in fps:
                need = 0
                for req in fp.requires:
                    need |= 1 << bit_of[req]
                pats.append((need, fp, fp.bind(bit_of)))
            self.items.append((name, pats))
        # value -> the bits of the atom sets it is in, per kind of value (f: form, l: lemma, ...)
        self.by_kind: dict[str, dict[str, int]] = {k: {} for k in "fluxdrm"}
        for st, b in bit_of.items():
            for a in st:
                d = self.by_kind[a[0]]
                d[a[2:]] = d.get(a[2:], 0) | (1 << b)
        # the features some agree/disagree compares: a sentence's values of them join the key of its search
        # (the bits only say which listed values a token has, not whether two tokens' values are equal)
        self.agree_feats = tuple(sorted({f for _, fps in items for fp in fps for _, _, fs, _ in fp.agree for f in fs}))
        self.rows: dict[tuple, int] = {}
        self.by_mask: dict[int, list] = {}
        self.found: dict[tuple, tuple] = {}

    def mask(self, sent: Sentence) -> tuple[int, list[int]]:
        """The bits the sentence's tokens meet, and each token's (C-level loops over the tokens: this runs
        on every sentence; a row not seen before is worked out once, :meth:`row_bits`)."""
        toks = sent.tokens
        keys = list(map(ROW_KEY, toks))
        bits = list(map(self.rows.get, keys))
        if None in bits:
            if len(self.rows) >= _ATOMS_MAX:
                self.rows.clear()
            for k, b in enumerate(bits):
                if b is None:
                    bits[k] = self.rows[keys[k]] = self.row_bits(toks[k])
        return reduce(or_, bits, 0), bits

    def row_bits(self, t: Token) -> int:
        """The bits of one token row, from its values (the atoms of :func:`token_atoms`, looked up per kind
        instead of built as strings)."""
        form, lemma, pos, tag, dep, mor = row(t)
        kinds = self.by_kind
        b = (kinds["f"].get(form, 0) | kinds["l"].get(lemma, 0) | kinds["u"].get(pos, 0)
             | kinds["x"].get(tag, 0) | kinds["d"].get(dep, 0))
        rel = kinds["r"]
        if rel:
            b |= rel.get(dep, 0)
            while ":" in dep:
                dep = dep.rsplit(":", 1)[0]
                b |= rel.get(dep, 0)
        if mor and kinds["m"]:
            for kv in mor.split("|"):
                f, v = kv.split("=", 1)
                for x in v.split(","):
                    b |= kinds["m"].get(f"{f}={x}", 0)
        return b

    def run(self, sent: Sentence) -> dict[str, tuple[str, tuple]]:
        """{construction: (pattern name, the matched tokens in the pattern's node order)} of the
        constructions whose first matching pattern matches (what :func:`match.match` returns for each)."""
        m, bits = self.mask(sent)
        todo = self.by_mask.get(m)
        if todo is None:
            if len(self.by_mask) >= _ATOMS_MAX:
                self.by_mask.clear()
            todo = self.by_mask[m] = self.survivors(m)
        if not todo:
            return {}
        # the searches read only the tokens' bits and heads: a sentence of the same bits and heads (an
        # utterance said again, parsed alike) has the same matched positions
        head = heads(sent)
        key = tuple(bits + head)  # one tuple per key: n bits, then n heads
        if self.agree_feats:
            key += tuple(feature_values(t, self.agree_feats) for t in sent.tokens)
        found = self.found.get(key)
        if found is None:
            if len(self.found) >= _ATOMS_MAX:
                self.found.clear()
            found = self.found[key] = self.search(Tree(sent, bits, head), todo)
        toks = sent.tokens
        return {name: (pname, tuple(toks[k] for k in ids)) for name, pname, ids in found}

    @staticmethod
    def search(tree: Tree, todo: list) -> tuple[tuple[str, str, tuple[int, ...]], ...]:
        """(construction, pattern name, matched token indices in the pattern's node order) of each match:
        tuples of strings and ints only, which the garbage collector stops tracking once it has seen them
        (the cache of them adds little to its collections)."""
        out = []
        for name, pats in todo:
            for fp, bound in pats:
                ids = fp.search(tree, bound)
                if ids is not None:
                    out.append((name, fp.pat.name, tuple(fp.node_positions(ids))))
                    break
        return tuple(out)

    def survivors(self, m: int) -> list[tuple[str, list]]:
        """The patterns whose requirements all hold in a sentence with bits ``m``, by construction, in
        order (what :meth:`run` searches; the same for every sentence with these bits, so cached by them)."""
        out = []
        for name, pats in self.items:
            fps = [(fp, bound) for need, fp, bound in pats if m & need == need]
            if fps:
                out.append((name, fps))
        return out
