"""Shared helpers of the tests/test_probes_*.py files (not a test module).

The one place these tests import the tiny-model builder, so its move (e.g. to
tests/helpers) touches one line.
"""

from __future__ import annotations

from pathlib import Path

from helpers import tiny_models as tiny  # noqa: F401  (the single import of the tiny-model builder)

# Independent gold for the features that can be read off the text (MSGS Table 1),
# written from the feature definitions, not from the generator's code.
TITLE_MINOR = {"a", "an", "the", "and", "or", "but", "nor", "to", "of", "in", "on", "at", "by", "for", "with", "as"}
IRREGULAR_PAST = {"ran", "slept", "swam", "sang", "sat", "left", "fell", "went", "came", "won", "saw", "found", "met",
                  "ate", "built", "took", "held", "drew", "wrote", "threw", "made", "broke", "bought", "brought", "sold"}
ADJECTIVES = {"happy", "tall", "hungry", "nice", "sleepy", "young", "sad", "little", "big", "tired", "funny", "silly"}
CONTROL_PREDICATES = {"tried", "wanted", "decided", "refused", "persuaded", "forced", "convinced", "encouraged",
                      "eager", "willing", "ready", "reluctant"}
RAISING_PREDICATES = {"seemed", "appeared", "happened", "tended", "expected", "believed", "considered", "assumed",
                      "likely", "certain", "sure", "bound"}


def words(sentence: str) -> list[str]:
    return sentence.rstrip(".").replace(",", "").split()


def lower_words(sentence: str) -> list[str]:
    return [w.lower() for w in words(sentence)]


def absolute_token_position(s: str) -> int:
    return int(lower_words(s)[0] == "the")


def lexical_content_the(s: str) -> int:
    return int("the" in lower_words(s))


def relative_token_position(s: str) -> int | None:
    """1 if "the" precedes "a", 0 if "a" precedes "the"; None unless each occurs exactly once."""
    ws = lower_words(s)
    if ws.count("the") != 1 or ws.count("a") != 1:
        return None
    return int(ws.index("the") < ws.index("a"))


def title_case(s: str) -> int:
    rest = [w for w in words(s)[1:] if w.lower() not in TITLE_MINOR]
    return int(all(w[:1].isupper() for w in rest))


def irregular_form(s: str) -> int:
    return int(bool(set(lower_words(s)) & IRREGULAR_PAST))


def syntactic_category(s: str) -> int:
    return int(bool(set(lower_words(s)) & ADJECTIVES))


def control_raising(s: str) -> int | None:
    ws = set(lower_words(s))
    c, r = bool(ws & CONTROL_PREDICATES), bool(ws & RAISING_PREDICATES)
    return None if c == r else int(c)


TEXT_FEATURES = {
    "absolute_token_position": absolute_token_position,
    "lexical_content_the": lexical_content_the,
    "relative_token_position": relative_token_position,
    "title_case": title_case,
    "irregular_form": irregular_form,
    "syntactic_category": syntactic_category,
    "control_raising": control_raising,
}


def tiny_model(out_dir: Path, kind: str = "causal", train_steps: int = 40) -> Path:
    """A small real model folder (BPE tokenizer + briefly trained weights) over synthetic English."""
    from povstim.synth.generator import generate

    sentences = [text for text, _, _ in generate("adult", 1200, 3)]
    return tiny.build(out_dir, sentences, kind, vocab_size=600, layers=2, hidden=64, heads=2, positions=128,
                      seed=1, train_steps=train_steps)
