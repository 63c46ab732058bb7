"""Issue 52: definitions that match their names, on hand-written gold UD v2 trees (invented sentences).

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
