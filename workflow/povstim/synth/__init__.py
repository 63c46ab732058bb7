"""Synthetic English corpora with gold UD parses and labelled DPE (``povstim synth``).

``generate(register, sentences, seed, dpe_rate)`` yields ``(text, conllu_block)``
pairs; ``write_corpus`` writes the text and CoNLL-U files. See docs/corpus.md.
"""

from .generator import generate, write_corpus  # noqa: F401
