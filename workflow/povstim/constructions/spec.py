"""Reading and checking declarative constructions (YAML entries): what a construction *is*, as data.

A construction file holds ``constructions:``, a list of entries::

    - name: passive                      # unique among all phenomena (Python and YAML)
      description: ...
      citation: ...
      targets: {blimp: [passive_1], zorro: [...], posh: [...]}   # paradigms it is evidence for
      words: {reflexives: {file: words/reflexives.txt}}          # named word lists (inline list or file)
      patterns:                          # every mode, unless modes: overrides one
        - name: be_passive
          nodes:                         # node -> constraints (all must hold of one token)
            verb: {}
            subj: {deprel: nsubj:pass}
          relations: [[verb, ">", subj]]          # DependencyMatcher operators (see RELATIONS)
          absent: [[verb, ">", {deprel: expl}]]   # negative: no token so related with these constraints
          agree: [[subj, verb, [Number, Person]]] # both carry each feature, with equal values
          disagree: [[subj, verb, [Number]]]      # both carry each feature, and some value differs
      modes: {strict: {patterns: [...]}}  # per-mode variants (literal = posh)
      sanity: {forms: [was, were]}        # the sanity sample: surviving sentences holding one of them
      languages: [en]

A node's constraints: ``form`` (case-insensitive, ’ = '), ``lemma`` (case-insensitive), ``upos``,
``xpos``, ``deprel`` (the relation or one of its subtypes: ``nsubj`` matches ``nsubj:pass``),
``deprel_exact``, each a string, a list, ``{file: path}`` (one word a line, ``#`` comments) or
``{words: name}``; ``feats`` (``{Reflex: "Yes"}``; a value may be a list); and ``not:`` with the
same keys (the token must match none of them). A pattern's ``agree:`` / ``disagree:`` relate two of its
nodes through UD features (:func:`agreement`): a token lacking a named feature never agrees nor
disagrees, so the pattern does not match (UD writes a periphrastic verb's Number/Person on its finite
auxiliary: a pattern names that ``aux`` node). Every error names the file and line of the key (or the
config key of an entry given inline in the config).

``upos``, ``deprel``/``deprel_exact`` and ``feats`` values are checked against Universal Dependencies
v2's inventories (``ud_v2.yaml``: the 37 relations and their subtypes, the 17 UPOS tags, the universal
features, plus what the project's parsers write): a typo (``deprel: nsubjj``, ``upos: VRB``) is an error
with a did-you-mean, not a pattern that silently matches nothing.
"""

from __future__ import annotations

import difflib
import functools
import logging
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..io import PovstimError, load_yaml, yaml_error
from ..parse.conllu import UD1_TO_UD2
from .blimp_vocab import vocabulary

log = logging.getLogger("povstim.constructions")

MODES = ("posh", "strict", "conservative")
MODE_ALIASES = {"literal": "posh"}
ENTRY_KEYS = ("name", "description", "citation", "targets", "words", "patterns", "modes", "sanity", "languages")
PATTERN_KEYS = ("name", "nodes", "relations", "absent", "agree", "disagree")
ATTRS = ("form", "lemma", "upos", "xpos", "deprel", "deprel_exact", "feats")
NODE_KEYS = ATTRS + ("not",)
TARGET_SUITES = ("blimp", "zorro", "posh")
SANITY_KEYS = ("forms", "surface")
# spaCy DependencyMatcher operators the post-filter also evaluates (a relation beyond the matcher's
# spanning tree, and every absent condition, is checked in Python with the same meaning).
RELATIONS = {
    ">": "A is the head of B", "<": "A is a dependent of B", ">>": "A dominates B", "<<": "B dominates A",
    ".": "A immediately precedes B", ".*": "A precedes B", ";": "A immediately follows B", ";*": "A follows B",
    "$+": "B is A's right neighbour sibling", "$-": "B is A's left neighbour sibling",
    "$++": "B is a sibling to the right of A", "$--": "B is a sibling to the left of A",
}
INVERSE = {">": "<", "<": ">", ">>": "<<", "<<": ">>", ".": ";", ";": ".", ".*": ";*", ";*": ".*",
           "$+": "$-", "$-": "$+", "$++": "$--", "$--": "$++"}


class Where:
    """Names a key of a construction source: ``file:line: key`` for a YAML file, the config key otherwise."""

    def __init__(self, source: str, lines: dict[tuple, int] | None, prefix: str = ""):
        self.source, self.lines, self.prefix = source, lines, prefix

    def __call__(self, path: tuple) -> str:
        key = self.prefix + "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if k or self.prefix else str(p))
                                    for k, p in enumerate(path))
        if self.lines is None:
            return key
        line = None
        for n in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:n]))
            if line is not None:
                break
        return f"{self.source}:{line}: {key}" if line else f"{self.source}: {key}"


UD_INVENTORY = Path(__file__).with_name("ud_v2.yaml")


@functools.cache
def ud_inventory() -> dict:
    """UD v2's relations (with subtypes), UPOS tags and features (``ud_v2.yaml``, the one place they are
    written): {"deprel": frozenset, "upos": frozenset, "features": {name: frozenset | None}}."""
    data = load_yaml(UD_INVENTORY, mapping=None, what="UD inventory")
    return {"deprel": frozenset(data["relations"]) | frozenset(data["subtypes"]),
            "relations": frozenset(data["relations"]), "upos": frozenset(data["upos"]),
            "features": {k: (None if v is None else frozenset(str(x) for x in v))
                         for k, v in data["features"].items()}}


def _suggest(value: str, known) -> str:
    """" (did you mean 'X'?)" for the closest known value (case-insensitive), or ""."""
    known = sorted(known)
    by_lower = {k.lower(): k for k in known}
    if value.lower() in by_lower:
        return f" (did you mean '{by_lower[value.lower()]}'?)"
    hint = difflib.get_close_matches(value.lower(), list(by_lower), n=1, cutoff=0.6)
    return f" (did you mean '{by_lower[hint[0]]}'?)" if hint else ""


def check_ud(attr: str, value: str, where, path) -> None:
    """An error naming ``where(path)`` unless ``value`` is in UD v2's inventory for ``attr``
    (``upos``, ``deprel``/``deprel_exact``)."""
    inv = ud_inventory()
    if attr == "upos":
        if value not in inv["upos"]:
            raise PovstimError(f"{where(path)}: {value!r} is not a UD v2 UPOS tag{_suggest(value, inv['upos'])}; "
                               f"the 17 tags: {', '.join(sorted(inv['upos']))} (universaldependencies.org/u/pos)")
        return
    if value in inv["deprel"]:
        return
    base = value.split(":", 1)[0]
    if value in UD1_TO_UD2 or value.lower() in UD1_TO_UD2:  # a UD v1 / spaCy name the reader maps to v2
        v2 = UD1_TO_UD2.get(value, UD1_TO_UD2.get(value.lower()))
        tip = f" (UD v1's name: UD v2 and the parses say '{v2}')"
    elif base in inv["relations"]:
        subs = sorted(d for d in inv["deprel"] if d.startswith(base + ":"))
        tip = (_suggest(value, subs) or _suggest(value, inv["deprel"])) + (
            f"; {base}'s subtypes: {', '.join(subs)}" if subs else f"; {base} has no subtype in UD v2's lists")
    else:
        tip = _suggest(value, inv["deprel"]) or _suggest(value, inv["relations"])
    raise PovstimError(f"{where(path)}: {value!r} is not a UD v2 relation{tip} (universaldependencies.org/u/dep; "
                       f"the inventory: {UD_INVENTORY.name})")


def check_feature(name: str, values: list[str], where, path) -> None:
    """An error unless ``name`` is a UD v2 feature (a layered ``Number[psor]`` counts as ``Number``) and
    each of ``values`` one of its values."""
    feats = ud_inventory()["features"]
    base = name.split("[", 1)[0]
    if base not in feats:
        raise PovstimError(f"{where(path)}: {name!r} is not a UD v2 feature{_suggest(base, feats)} "
                           f"(universaldependencies.org/u/feat; known: {', '.join(sorted(feats))})")
    allowed = feats[base]
    if allowed is None:
        return
    for i, v in enumerate(values):
        if v not in allowed:
            raise PovstimError(f"{where(path + ((i,) if len(values) > 1 else ()))}: {v!r} is not a value of UD "
                               f"feature {base}{_suggest(v, allowed)}; its values: {', '.join(sorted(allowed))}")


def agreement(a: tuple, b: tuple, same: bool) -> bool:
    """``agree`` (``same``) or ``disagree`` between two tokens' values of the named features (one frozenset of
    values per feature, empty when the token lacks it): both carry every feature, and the values are equal
    for every one (agree) / differ for at least one (disagree). A multi-valued feature's values compare as a
    set (``PronType=Int,Rel``). The one definition both matchers call."""
    if not all(a) or not all(b):
        return False
    return (a == b) if same else (a != b)


def norm(word: str) -> str:
    return str(word).lower().replace("’", "'")


@dataclass(frozen=True)
class Node:
    name: str
    attrs: dict  # attr -> frozenset of values (feats: name -> frozenset)
    nots: dict   # the same, for not:


@dataclass(frozen=True)
class Pattern:
    name: str
    nodes: tuple[Node, ...]
    relations: tuple[tuple[str, str, str], ...]
    absent: tuple[tuple[str, str, Node], ...]
    # (A, B, features): A and B carry every feature with equal values / every feature, some value differing
    agree: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    disagree: tuple[tuple[str, str, tuple[str, ...]], ...] = ()

    def node(self, name: str) -> Node:
        return next(n for n in self.nodes if n.name == name)


@dataclass(frozen=True)
class Construction:
    name: str
    description: str
    citation: str
    targets: dict
    patterns: dict  # mode -> tuple[Pattern, ...]
    sanity_forms: frozenset | None
    sanity_surface: bool
    languages: tuple[str, ...]
    origin: str


# ------------------------------------------------------------------------------ YAML with lines

def load_yaml_lines(path: Path) -> tuple[object, dict[tuple, int]]:
    """The file's data and the line of every key / list item (path tuple -> 1-based line)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PovstimError(f"construction file {path} does not exist") from None
    try:
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise yaml_error(path, text, exc) from None
    lines: dict[tuple, int] = {}

    def walk(n, p):
        lines.setdefault(p, n.start_mark.line + 1)
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                lines[p + (k.value,)] = k.start_mark.line + 1
                walk(v, p + (k.value,))
        elif isinstance(n, yaml.SequenceNode):
            for i, v in enumerate(n.value):
                lines[p + (i,)] = v.start_mark.line + 1
                walk(v, p + (i,))

    if node is not None:
        walk(node, ())
    return data, lines


def read_file(path: str | Path, blimp: str | Path | None = None) -> list[Construction]:
    path = Path(path)
    data, lines = load_yaml_lines(path)
    where = Where(str(path), lines)
    if not isinstance(data, dict) or "constructions" not in data:
        got = {list: "a list", str: "a string", type(None): "nothing"}.get(type(data), type(data).__name__)
        if isinstance(data, dict):
            got = f"a mapping without 'constructions:' (keys: {', '.join(map(str, data)) or 'none'})"
        raise PovstimError(f"{path}:1: a construction file holds a mapping whose key 'constructions:' is a list of "
                           f"constructions; this file holds {got}")
    unknown = set(data) - {"constructions"}
    if unknown:
        raise PovstimError(f"{where((sorted(unknown)[0],))}: unknown key (a construction file holds 'constructions:')")
    return parse_entries(data["constructions"], where, ("constructions",), path.parent, path.read_text("utf-8"),
                         blimp=blimp)


def parse_entries(entries, where: Where, path: tuple, base_dir: Path, text: str = "",
                  blimp: str | Path | None = None) -> list[Construction]:
    """The entries' constructions; ``blimp`` is the BLiMP data folder a ``{blimp: name}`` word list reads
    (``filter.blimp_vocabulary``; constructions/blimp_vocab.py)."""
    if not isinstance(entries, list):
        raise PovstimError(f"{where(path)}: expected a list of constructions")
    out: list[Construction] = []
    seen: dict[str, str] = {}
    for i, e in enumerate(entries):
        c = parse_entry(e, where, path + (i,), base_dir, blimp)
        if c.name in seen:
            raise PovstimError(f"{where(path + (i, 'name'))}: a construction named {c.name!r} is already defined "
                               f"({seen[c.name]}): construction names must be unique")
        seen[c.name] = where(path + (i, "name"))
        out.append(c)
    return out


# ------------------------------------------------------------------------------ one entry

def _unknown(keys, allowed, where, path, what):
    for k in keys:
        if k not in allowed:
            hint = difflib.get_close_matches(str(k), allowed, n=1)
            tip = f" (did you mean '{hint[0]}'?)" if hint else ""
            raise PovstimError(f"{where(path + (k,))}: unknown {what} {k!r}{tip}; known: {', '.join(allowed)}")


def _strings(value, where, path) -> list[str]:
    vals = value if isinstance(value, list) else [value]
    out = []
    for v in vals:
        if isinstance(v, bool):  # YAML 1.1 reads Yes/No as booleans: UD values are strings
            v = "Yes" if v else "No"
        if not isinstance(v, (str, int, float)):
            raise PovstimError(f"{where(path)}: expected a string or a list of strings, got {type(v).__name__}")
        out.append(str(v))
    return out


def read_word_file(p: Path, where, path) -> list[str]:
    if not p.is_file():
        raise PovstimError(f"{where(path)}: word-list file {p} does not exist")
    words = []
    for line in p.read_text(encoding="utf-8").splitlines():
        w = line.split("#", 1)[0].strip()
        if w:
            words.append(w)
    if not words:
        raise PovstimError(f"{where(path)}: word-list file {p} holds no word")
    return words


def _values(value, where, path, words: dict, base_dir: Path) -> list[str]:
    if isinstance(value, dict):
        _unknown(value, ("file", "words"), where, path, "word-list key")
        if len(value) != 1:
            raise PovstimError(f"{where(path)}: give one of file: or words:")
        if "file" in value:
            return read_word_file(base_dir / str(value["file"]), where, path + ("file",))
        name = value["words"]
        if name not in words:
            hint = difflib.get_close_matches(str(name), list(words), n=1)
            tip = f" (did you mean '{hint[0]}'?)" if hint else ""
            raise PovstimError(f"{where(path + ('words',))}: unknown word list {name!r}{tip}; the entry's words: "
                               f"{', '.join(words) or '(none)'}")
        return list(words[name])
    return _strings(value, where, path)


def _attrs(spec, where, path, words, base_dir, allow_not: bool) -> tuple[dict, dict]:
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise PovstimError(f"{where(path)}: a node is a mapping of constraints ({', '.join(NODE_KEYS)})")
    _unknown(spec, NODE_KEYS if allow_not else ATTRS, where, path, "node attribute")
    attrs: dict = {}
    for k, v in spec.items():
        if k == "not":
            continue
        if k == "feats":
            if not isinstance(v, dict) or not v:
                raise PovstimError(f"{where(path + (k,))}: feats is a mapping of UD features ({{Number: Plur}})")
            attrs[k] = {}
            for f, x in v.items():
                got = _strings(x, where, path + (k, f))
                check_feature(str(f), got, where, path + (k, f))
                attrs[k][str(f)] = frozenset(got)
            continue
        vals = _values(v, where, path + (k,), words, base_dir)
        if k in ("upos", "deprel", "deprel_exact"):
            for i, x in enumerate(vals):
                check_ud(k, x, where, path + (k,) + ((i,) if isinstance(v, list) else ()))
        if k in ("form", "lemma"):
            vals = [norm(x) for x in vals]
        if not vals:
            raise PovstimError(f"{where(path + (k,))}: an empty list matches nothing")
        attrs[k] = frozenset(vals)
    nots: dict = {}
    if allow_not and "not" in spec:
        nots, _ = _attrs(spec["not"], where, path + ("not",), words, base_dir, False)
    return attrs, nots


def _pattern(spec, where, path, words, base_dir) -> Pattern:
    if not isinstance(spec, dict):
        raise PovstimError(f"{where(path)}: a pattern is a mapping ({', '.join(PATTERN_KEYS)})")
    _unknown(spec, PATTERN_KEYS, where, path, "pattern key")
    nodes_spec = spec.get("nodes")
    if not isinstance(nodes_spec, dict) or not nodes_spec:
        raise PovstimError(f"{where(path + ('nodes',))}: a pattern needs nodes: a mapping of node names to "
                           "constraints")
    nodes = []
    for name, ns in nodes_spec.items():
        a, n = _attrs(ns, where, path + ("nodes", name), words, base_dir, True)
        nodes.append(Node(str(name), a, n))
    names = [n.name for n in nodes]

    def check_node(x, p):
        if x not in names:
            hint = difflib.get_close_matches(str(x), names, n=1)
            tip = f" (did you mean '{hint[0]}'?)" if hint else ""
            raise PovstimError(f"{where(p)}: unknown node {x!r}{tip}; the pattern's nodes: {', '.join(names)}")

    def check_op(op, p):
        if op not in RELATIONS:
            raise PovstimError(f"{where(p)}: unknown relation {op!r}; known: {', '.join(RELATIONS)}")

    rels = []
    for i, r in enumerate(spec.get("relations") or []):
        p = path + ("relations", i)
        if not (isinstance(r, list) and len(r) == 3):
            raise PovstimError(f"{where(p)}: a relation is [A, operator, B]")
        check_node(r[0], p)
        check_op(r[1], p)
        check_node(r[2], p)
        if r[0] == r[2]:
            raise PovstimError(f"{where(p)}: a relation joins two different nodes")
        rels.append((str(r[0]), str(r[1]), str(r[2])))
    absent = []
    for i, r in enumerate(spec.get("absent") or []):
        p = path + ("absent", i)
        if not (isinstance(r, list) and len(r) == 3):
            raise PovstimError(f"{where(p)}: a negative condition is [node, operator, {{constraints}}]: no token so "
                               "related to the node matches the constraints")
        check_node(r[0], p)
        check_op(r[1], p)
        a, n = _attrs(r[2], where, p + (2,), words, base_dir, True)
        absent.append((str(r[0]), str(r[1]), Node(f"absent{i}", a, n)))
    agreements = {}
    for key in ("agree", "disagree"):
        got = spec.get(key)
        if got is None:
            agreements[key] = ()
            continue
        if not isinstance(got, list) or not got:
            raise PovstimError(f"{where(path + (key,))}: {key} is a list of [A, B, [Feature, ...]] (two nodes and "
                               "the UD features they share)")
        out = []
        for i, r in enumerate(got):
            p = path + (key, i)
            if not (isinstance(r, list) and len(r) == 3):
                raise PovstimError(f"{where(p)}: an entry of {key} is [A, B, [Feature, ...]] (two nodes and UD features, "
                                   f"e.g. [subj, verb, [Number, Person]])")
            check_node(r[0], p)
            check_node(r[1], p)
            if r[0] == r[1]:
                raise PovstimError(f"{where(p)}: an entry of {key} relates two different nodes")
            feats = r[2] if isinstance(r[2], list) else [r[2]]
            if not feats or not all(isinstance(f, str) and f for f in feats):
                raise PovstimError(f"{where(p + (2,))}: the features are a non-empty list of UD feature names "
                                   "([Number, Person])")
            for j, f in enumerate(feats):
                check_feature(f, [], where, p + (2, j) if isinstance(r[2], list) else p + (2,))
            if len(set(feats)) != len(feats):
                raise PovstimError(f"{where(p + (2,))}: a feature is named twice")
            out.append((str(r[0]), str(r[1]), tuple(feats)))
        agreements[key] = tuple(out)
    pname = str(spec.get("name", f"p{path[-1]}"))
    pat = Pattern(pname, tuple(nodes), tuple(rels), tuple(absent), agreements["agree"], agreements["disagree"])
    spanning_order(pat, where, path)  # every node reachable: an error now, not at the first sentence
    return pat


def spanning_order(pat: Pattern, where=None, path=()) -> tuple[list, list]:
    """The DependencyMatcher's edges (each node after the first joined to an earlier one) and the
    relations left over for the post-filter. A node no relation reaches is an error."""
    placed = [pat.nodes[0].name]
    edges, used = [], set()
    while len(placed) < len(pat.nodes):
        for i, (a, op, b) in enumerate(pat.relations):
            if i in used:
                continue
            if a in placed and b not in placed:
                edges.append((a, op, b))
            elif b in placed and a not in placed:
                edges.append((b, INVERSE[op], a))
            else:
                continue
            used.add(i)
            placed.append(edges[-1][2])
            break
        else:
            lost = next(n.name for n in pat.nodes if n.name not in placed)
            msg = (f"node {lost!r} is not joined to the pattern's other nodes by any relation (add one, e.g. a "
                   f"linear order [{placed[0]}, '.*', {lost}])")
            raise PovstimError(f"{where(path + ('nodes', lost))}: {msg}" if where else msg)
    rest = [r for i, r in enumerate(pat.relations) if i not in used]
    return edges, rest


def parse_entry(e, where: Where, path: tuple, base_dir: Path, blimp: str | Path | None = None) -> Construction:
    if not isinstance(e, dict):
        raise PovstimError(f"{where(path)}: a construction is a mapping ({', '.join(ENTRY_KEYS)})")
    _unknown(e, ENTRY_KEYS, where, path, "construction key")
    name = e.get("name")
    if not isinstance(name, str) or not name.replace("_", "").replace("-", "").isalnum():
        raise PovstimError(f"{where(path + ('name',))}: a construction needs a name (letters, digits, _ and -)")
    words: dict = {}
    for k, v in (e.get("words") or {}).items():
        if isinstance(v, dict) and "blimp" in v:  # a list of BLiMP's vocabulary, read from the BLiMP data
            _unknown(v, ("blimp",), where, path + ("words", k), "word-list key")
            words[str(k)] = [norm(x) for x in vocabulary(str(v["blimp"]), blimp, where(path + ("words", k, "blimp")))]
            continue
        words[str(k)] = [norm(x) for x in _values(v, where, path + ("words", k), {}, base_dir)]
    default = None
    if "patterns" in e:
        default = tuple(_pattern(p, where, path + ("patterns", i), words, base_dir)
                        for i, p in enumerate(_list(e["patterns"], where, path + ("patterns",))))
    per_mode: dict = {}
    for m, spec in (e.get("modes") or {}).items():
        mode = MODE_ALIASES.get(m, m)
        if mode not in MODES:
            raise PovstimError(f"{where(path + ('modes', m))}: unknown mode {m!r}; known: literal (= posh), "
                               f"{', '.join(MODES)}")
        if not isinstance(spec, dict) or set(spec) != {"patterns"}:
            raise PovstimError(f"{where(path + ('modes', m))}: a mode's variant is {{patterns: [...]}}")
        per_mode[mode] = tuple(_pattern(p, where, path + ("modes", m, "patterns", i), words, base_dir)
                               for i, p in enumerate(_list(spec["patterns"], where, path + ("modes", m, "patterns"))))
    patterns = {}
    for m in MODES:
        pats = per_mode.get(m, default)
        if not pats:
            raise PovstimError(f"{where(path)}: construction {name!r} has no pattern for mode {m} (give patterns: "
                               "for every mode, or modes: {m: {patterns: ...}} for each)")
        patterns[m] = pats
    targets = e.get("targets") or {}
    if not isinstance(targets, dict):
        raise PovstimError(f"{where(path + ('targets',))}: targets is a mapping of suites ({', '.join(TARGET_SUITES)}) "
                           "to paradigm names")
    _unknown(targets, TARGET_SUITES, where, path + ("targets",), "benchmark suite")
    targets = {k: tuple(_strings(v, where, path + ("targets", k))) for k, v in targets.items() if v}
    sanity = e.get("sanity")
    sanity_forms, sanity_surface = None, False
    if sanity is not None:
        if not isinstance(sanity, dict):
            raise PovstimError(f"{where(path + ('sanity',))}: sanity is {{forms: [...]}} or {{surface: true}}")
        _unknown(sanity, SANITY_KEYS, where, path + ("sanity",), "sanity key")
        if "forms" in sanity:
            sanity_forms = frozenset(norm(x) for x in _values(sanity["forms"], where, path + ("sanity", "forms"),
                                                               words, base_dir))
        sanity_surface = bool(sanity.get("surface", False))
    langs = tuple(_strings(e.get("languages", ["en"]), where, path + ("languages",)))
    return Construction(name, str(e.get("description", "")), str(e.get("citation", "")), targets, patterns,
                        sanity_forms, sanity_surface, langs, where(path + ("name",)))


def _list(v, where, path) -> list:
    if not isinstance(v, list) or not v:
        raise PovstimError(f"{where(path)}: expected a non-empty list of patterns")
    return v
