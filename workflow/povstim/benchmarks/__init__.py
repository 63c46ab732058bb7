"""Minimal-pair benchmark suites: the POSH-BENCH generator and importers.

Every suite, generated or imported, ends up in one schema: one JSON object per
pair with ``suite, paradigm, category, item_id, good, bad`` (+ suite-specific
fields), one ``{paradigm}.jsonl`` file per paradigm (see ``suite.py``).
"""
