"""Definitions that match their names, on hand-written gold UD v2 trees (invented sentences).

- passive: *have got* ('s got, 've got: possession) is not a passive; a get-passive still is;
- binding_domain: the complement clause of its pronoun pattern is finite (no infinitival *to*);
- relative_clause: a relative on the pivot of an existential (*there's a dog that barks*) is not on a subject;
- pp_modified_subject: a prepositional modifier of a subject *noun*, not a quantifier's partitive (*all of them*).
"""

from __future__ import annotations

import io

import pytest

from povstim import dpe
from povstim.parse.conllu import read

TREES = """# sent_id = havegot-1
# text = He's got a red ball.
1	He	he	PRON	PRP	_	3	nsubj	_	SpaceAfter=No
2	's	have	AUX	VBZ	_	3	aux:pass	_	_
3	got	get	VERB	VBN	_	0	root	_	_
4	a	a	DET	DT	_	6	det	_	_
5	red	red	ADJ	JJ	_	6	amod	_	_
6	ball	ball	NOUN	NN	_	3	obj	_	SpaceAfter=No
7	.	.	PUNCT	.	_	3	punct	_	_

# sent_id = havegot-2
# text = They've got toys.
1	They	they	PRON	PRP	_	3	nsubj:pass	_	SpaceAfter=No
2	've	have	AUX	VBP	_	3	aux	_	_
3	got	get	VERB	VBN	_	0	root	_	_
4	toys	toy	NOUN	NNS	_	3	obj	_	SpaceAfter=No
5	.	.	PUNCT	.	_	3	punct	_	_

# sent_id = getpass-1
# text = The cup got broken.
1	The	the	DET	DT	_	2	det	_	_
2	cup	cup	NOUN	NN	_	4	nsubj:pass	_	_
3	got	get	AUX	VBD	_	4	aux:pass	_	_
4	broken	break	VERB	VBN	_	0	root	_	SpaceAfter=No
5	.	.	PUNCT	.	_	4	punct	_	_

# sent_id = bepass-1
# text = It was eaten.
1	It	it	PRON	PRP	_	3	nsubj:pass	_	_
2	was	be	AUX	VBD	_	3	aux:pass	_	_
3	eaten	eat	VERB	VBN	_	0	root	_	SpaceAfter=No
4	.	.	PUNCT	.	_	3	punct	_	_

# sent_id = inf-1
# text = You forgot to close it.
1	You	you	PRON	PRP	_	2	nsubj	_	_
2	forgot	forget	VERB	VBD	_	0	root	_	_
3	to	to	PART	TO	_	4	mark	_	_
4	close	close	VERB	VB	_	2	ccomp	_	_
5	it	it	PRON	PRP	_	4	obj	_	SpaceAfter=No
6	.	.	PUNCT	.	_	2	punct	_	_

# sent_id = fin-1
# text = Mom said that Sam saw her.
1	Mom	Mom	PROPN	NNP	_	2	nsubj	_	_
2	said	say	VERB	VBD	_	0	root	_	_
3	that	that	SCONJ	IN	_	5	mark	_	_
4	Sam	Sam	PROPN	NNP	_	5	nsubj	_	_
5	saw	see	VERB	VBD	_	2	ccomp	_	_
6	her	she	PRON	PRP	_	5	obj	_	SpaceAfter=No
7	.	.	PUNCT	.	_	2	punct	_	_

# sent_id = expl-1
# text = There's a duck that swims.
1	There	there	PRON	EX	_	2	expl	_	SpaceAfter=No
2	's	be	VERB	VBZ	_	0	root	_	_
3	a	a	DET	DT	_	4	det	_	_
4	duck	duck	NOUN	NN	_	2	nsubj	_	_
5	that	that	PRON	WDT	_	6	nsubj	_	_
6	swims	swim	VERB	VBZ	_	4	acl:relcl	_	SpaceAfter=No
7	.	.	PUNCT	.	_	2	punct	_	_

# sent_id = subjrel-1
# text = The duck that swims is wet.
1	The	the	DET	DT	_	2	det	_	_
2	duck	duck	NOUN	NN	_	6	nsubj	_	_
3	that	that	PRON	WDT	_	4	nsubj	_	_
4	swims	swim	VERB	VBZ	_	2	acl:relcl	_	_
5	is	be	AUX	VBZ	_	6	cop	_	_
6	wet	wet	ADJ	JJ	_	0	root	_	SpaceAfter=No
7	.	.	PUNCT	.	_	6	punct	_	_

# sent_id = part-1
# text = All of them are wet.
1	All	all	DET	DT	_	5	nsubj	_	_
2	of	of	ADP	IN	_	3	case	_	_
3	them	they	PRON	PRP	_	1	nmod	_	_
4	are	be	AUX	VBP	_	5	cop	_	_
5	wet	wet	ADJ	JJ	_	0	root	_	SpaceAfter=No
6	.	.	PUNCT	.	_	5	punct	_	_

# sent_id = pp-1
# text = The lid of the box is red.
1	The	the	DET	DT	_	2	det	_	_
2	lid	lid	NOUN	NN	_	7	nsubj	_	_
3	of	of	ADP	IN	_	5	case	_	_
4	the	the	DET	DT	_	5	det	_	_
5	box	box	NOUN	NN	_	2	nmod	_	_
6	is	be	AUX	VBZ	_	7	cop	_	_
7	red	red	ADJ	JJ	_	0	root	_	SpaceAfter=No
8	.	.	PUNCT	.	_	7	punct	_	_

"""

SENTS = {s.sent_id: s for s in read(io.StringIO(TREES))}

# (sentence, construction, found in every mode?)
CASES = [
    ("havegot-1", "passive", False), ("havegot-2", "passive", False),
    ("getpass-1", "passive", True), ("bepass-1", "passive", True),
    ("inf-1", "binding_domain", False), ("fin-1", "binding_domain", True),
    ("expl-1", "relative_clause", False), ("subjrel-1", "relative_clause", True),
    ("part-1", "pp_modified_subject", False), ("pp-1", "pp_modified_subject", True),
]


@pytest.mark.parametrize("mode", dpe.MODES)
@pytest.mark.parametrize("sid, name, found", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_definition_on_gold_trees(sid, name, found, mode):
    got = dpe.find_dpe(SENTS[sid], mode, [name])
    assert bool(got) == found, (sid, name, mode, [m.rule for m in got])


# ----------------------------------------------------------------------------- FiCT as published

from povstim.constructions import blimp_vocab, library  # noqa: E402
from povstim.io import PovstimError  # noqa: E402

PUBLISHED = "workflow/povstim/constructions/published/fict.yaml"


@pytest.fixture
def registry_restored():
    saved = dict(dpe.PHENOMENA), dict(library.CONSTRUCTIONS), dict(library._USER)
    yield
    for d, old in zip((dpe.PHENOMENA, library.CONSTRUCTIONS, library._USER), saved):
        d.clear()
        d.update(old)


def test_blimp_vocabulary_is_read_from_the_items(shared_data):
    """Gold answers read off BLiMP's own items by hand (passive_1 pair 0, determiner_noun_agreement_1 pair 2,
    irregular_plural_subject_verb_agreement_1 pair 0, existential_there_quantifiers_1 pair 0)."""
    folder = shared_data / "blimp" / "data"
    parts = blimp_vocab.vocabulary("passive_participles", folder, "k")
    assert {"confused", "communicated"} <= set(parts) and "by" not in parts and "about" not in parts
    nouns = blimp_vocab.vocabulary("det_noun_nouns", folder, "k")
    assert {"children", "child", "store", "stores"} <= set(nouns) and "grocery" not in nouns
    assert "radii" in blimp_vocab.vocabulary("sv_agreement_nouns", folder, "k")
    quants = blimp_vocab.vocabulary("existential_quantifiers", folder, "k")
    assert {"a", "each", "every", "all", "most", "no"} <= set(quants) and "there" not in quants


def test_a_missing_blimp_folder_or_file_is_an_error_naming_it(tmp_path, registry_restored):
    with pytest.raises(PovstimError, match=r"published/fict.yaml:\d+: constructions\[0\]\.words\.participles\.blimp: "
                                           r"filter.blimp_vocabulary: the BLiMP folder .*nowhere does not exist"):
        library.use({"constructions": PUBLISHED, "blimp_vocabulary": str(tmp_path / "nowhere")})
    (tmp_path / "passive_1.jsonl").write_text('{"sentence_good": "It was seen.", "sentence_bad": "It was gone."}\n')
    with pytest.raises(PovstimError, match=r"passive_2.jsonl does not exist"):
        library.use({"constructions": PUBLISHED, "blimp_vocabulary": str(tmp_path)})
    with pytest.raises(PovstimError, match=r"needs filter.blimp_vocabulary"):
        library.use({"constructions": PUBLISHED, "blimp_vocabulary": None})


FICT_TREES = """# sent_id = adjpart-1
# text = The door is closed.
1	The	the	DET	DT	_	2	det	_	_
2	door	door	NOUN	NN	_	4	nsubj	_	_
3	is	be	AUX	VBZ	_	4	cop	_	_
4	closed	closed	ADJ	JJ	_	0	root	_	SpaceAfter=No
5	.	.	PUNCT	.	_	4	punct	_	_

# sent_id = det-1
# text = I like this dog.
1	I	I	PRON	PRP	_	2	nsubj	_	_
2	like	like	VERB	VBP	_	0	root	_	_
3	this	this	DET	DT	_	4	det	_	_
4	dog	dog	NOUN	NN	_	2	obj	_	SpaceAfter=No
5	.	.	PUNCT	.	_	2	punct	_	_

"""


def test_fict_definitions_take_the_blimp_words_only(tmp_path, registry_restored):
    """A two-item BLiMP folder: only its words count (closed is a passive participle there, dog is not a noun)."""
    items = {
        "passive_1": ("The door is closed.", "The door is slept."), "passive_2": ("It was seen.", "It was gone."),
        "determiner_noun_agreement_1": None, "determiner_noun_agreement_irregular_1": None,
        "determiner_noun_agreement_2": None, "determiner_noun_agreement_irregular_2": None,
        "regular_plural_subject_verb_agreement_1": None, "irregular_plural_subject_verb_agreement_1": None,
        "regular_plural_subject_verb_agreement_2": None, "irregular_plural_subject_verb_agreement_2": None,
        "existential_there_quantifiers_1": ("There is a cat.", "There is every cat."),
        "existential_there_quantifiers_2": ("Every cat is there.", "There is every cat."),
    }
    import json as _json
    for uid, pair in items.items():
        rec = ({"sentence_good": pair[0], "sentence_bad": pair[1]} if pair else
               {"sentence_good": "x", "sentence_bad": "y", "one_prefix_word_good": "cat", "one_prefix_word_bad": "cats",
                "two_prefix_word": "cats", "one_prefix_prefix": "The cat", "two_prefix_prefix_good": "The cat",
                "two_prefix_prefix_bad": "The cats"})
        (tmp_path / f"{uid}.jsonl").write_text(_json.dumps(rec) + "\n")
    library.use({"constructions": PUBLISHED, "blimp_vocabulary": str(tmp_path)})
    trees = {s.sent_id: s for s in read(io.StringIO(FICT_TREES))}
    assert [m.rule for m in dpe.find_dpe(trees["adjpart-1"], "posh", ["fict_passive"])] == [
        "fict_passive:copula_adjectival_participle"]
    assert not dpe.find_dpe(trees["adjpart-1"], "posh", ["passive"])  # povstim's broader passive: no passive here
    assert not dpe.find_dpe(trees["det-1"], "posh", ["fict_det_noun"])  # dog is not among this folder's nouns
    assert dpe.find_dpe(trees["det-1"], "posh", ["det_noun"])  # povstim's det_noun: any noun
