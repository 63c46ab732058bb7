"""Declarative constructions: a construction of the DPE filter as a piece of data (docs/constructions.md).

- :mod:`.spec`: the YAML format, read and checked (every error names the file:line or config key);
- :mod:`.match`: a pattern on a UD tree — spaCy's DependencyMatcher over a Doc built from the
  CoNLL-U columns, plus a post-filter for what the matcher cannot say (negative conditions);
- :mod:`.library`: the library's entries (``library/*.yaml``: FiCT's 15 and the AANN) and the
  user's (``filter.constructions``), registered in the DPE registry beside the Python phenomena.
"""
