"""The shared lexicon: complete inflections, consistent tags, the classes other stages read."""

from __future__ import annotations

from povstim import lexicon as L

BENCH_CLASSES = ("nn_m", "nn_f", "names_m", "names_f", "nn_human", "nn_obj", "vb_state", "vb_trans_animate",
                 "vb_trans", "vb_intrans_animate", "vb_percep", "vb_question", "aux", "adj_person", "det")


def test_benchmark_classes_exist_and_are_nonempty():
    for cls in BENCH_CLASSES:
        assert len(L.CLASSES[cls]) >= 2, cls


def test_verbs_have_all_five_forms():
    for cls, entries in L.CLASSES.items():
        if not cls.startswith("vb_"):
            continue
        for v in entries:
            forms = [v.base, v.s3, v.past, v.pp, v.ger]
            assert all(f and f.isalpha() and f.islower() for f in forms), v
            assert v.s3.endswith("s") and v.ger.endswith("ing"), v
            assert v.form("past") == v.past


def test_gendered_nouns_are_aligned_pairs_of_humans():
    assert len(L.NN_M) == len(L.NN_F)
    assert all(n.gender == "m" and n.human and n.animate for n in L.NN_M)
    assert all(n.gender == "f" and n.human and n.animate for n in L.NN_F)
    assert all(n.gender == "n" and n.human for n in L.NN_HUMAN_N)
    assert ("boy", "girl") in {(m.sg, f.sg) for m, f in zip(L.NN_M, L.NN_F)}
    assert ("king", "queen") in {(m.sg, f.sg) for m, f in zip(L.NN_M, L.NN_F)}


def test_animacy_and_plurals():
    assert all(n.animate and not n.human for n in L.NN_ANIMAL)
    assert all(not n.animate for n in L.NN_OBJ)
    plurals = {n.sg: n.pl for n in L.CLASSES["nn_animate"] + L.NN_OBJ}
    assert plurals["man"] == "men" and plurals["child"] == "children" and plurals["baby"] == "babies"
    assert plurals["box"] == "boxes" and plurals["sheep"] == "sheep" and plurals["toy"] == "toys"


def test_names_are_capitalised_and_gendered():
    assert all(n.form[0].isupper() and n.gender == "m" for n in L.NAMES_M)
    assert all(n.form[0].isupper() and n.gender == "f" for n in L.NAMES_F)
    assert not {n.form for n in L.NAMES_M} & {n.form for n in L.NAMES_F}


def test_auxiliaries_and_determiners():
    forms = {a.form: a for a in L.AUX}
    for w in ("is", "are", "was", "can", "will", "should", "could", "did", "does", "has"):
        assert w in forms
    assert forms["is"].number == "Sing" and forms["are"].number == "Plur"
    assert {a.form for a in L.AUX_SG} == {"does", "did"}
    assert all(d.number != "Plur" for d in L.DET_SG) and all(d.number != "Sing" for d in L.DET_PL)


def test_reflexive_verbs_are_animate_transitives():
    assert set(L.VB_REFL) <= set(L.VB_TRANS_ANIMATE)
    assert {v.base for v in L.VB_REFL} >= {"hurt", "see", "like"}


def test_vocabulary():
    vocab = L.vocabulary()
    assert vocab == sorted(set(vocab)) and "himself" in vocab and "wonder" in vocab


def test_core_benchmark_words_are_in_both_registers():
    """POSH-BENCH draws words from the intersection of both corpora's frequent words, so the core
    gendered pairs and common nouns must not be restricted to one register."""
    both = {n.sg for cls in ("nn_m", "nn_f", "nn_human", "nn_obj") for n in L.CLASSES[cls] if n.register == "both"}
    assert {"boy", "girl", "man", "woman", "king", "queen", "teacher", "friend", "book", "ball"} <= both
    for m, f in zip(L.NN_M, L.NN_F):
        assert m.register == f.register, (m.sg, f.sg)
