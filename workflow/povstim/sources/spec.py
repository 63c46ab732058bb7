"""A source's config entry, checked and defaulted by the sources schema (per kind).

Every source stage (download, clean, synth) reads its spec through
:func:`source_spec`, so the schema's defaults (``min_words: 3``,
``retries: 3``, ...) are the only ones. Defaults that depend on other keys
(``lowercase`` follows ``style``; ``split_sentences``, ``drop_roles`` and
``include`` follow the format) are computed where they are used, and the
schema's descriptions say so.
"""

from __future__ import annotations

from ..io import PovstimError, json_object_arg
from ..settings import section


def source_spec(name: str, given: "dict | str | None", where: str = "--params") -> dict:
    spec = json_object_arg(given, where)
    if not spec:
        raise PovstimError(f"{where}: the source's config is empty (it needs at least `kind`)")
    return section("sources", {name: spec}, where)[name]
