"""Corpus assembly by word budget and source mixture (``povstim assemble``)."""

from .assemble import assemble, corpus_stats  # noqa: F401
