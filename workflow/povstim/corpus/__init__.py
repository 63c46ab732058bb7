"""Corpus assembly by word budget and source mixture (``povstim assemble``)."""

from .assemble import assemble  # noqa: F401
