"""The direct-positive-evidence (DPE) contract: one registry entry per phenomenon.

The registry itself (:class:`Phenomenon`, :func:`register`, :data:`PHENOMENA`,
:func:`find_dpe`, the prefilter and its hash) is :mod:`povstim.dpe.registry`;
this package re-exports it and fills it: POSH App. C's phenomena are Python
modules of this package (``question_formation``, ``binding``, ``wanna``), and
the declarative constructions of :mod:`povstim.constructions` (the YAML
library; the user's ``filter.constructions`` are added by
:func:`povstim.constructions.use`) register beside them. Everything that needs
to know about DPE asks this registry and treats both kinds the same.
"""

from __future__ import annotations

from .registry import (  # noqa: F401
    MODES, PHENOMENA, TARGETED_PRECISION, Context, FitFn, Hit, Match, Phenomenon, RuleFn, SanityFn, SurfaceFn, check_rules,
    feeds_targeted, find_dpe, languages, needs_parse, register, sanity_names, surface_hash,
)

# The phenomena, in the order dpe.tsv lists them (registration order): App. C's Python modules first,
# then the declarative library.
from . import question_formation, binding, wanna  # noqa: E402,F401
# French question formation and binding (languages=("fr",)), before the library: the library may be
# the module imported first, and then everything above registers before its entries whichever comes first
from . import french  # noqa: E402,F401
from ..constructions import library as _library  # noqa: E402,F401  (registers the library when it loads)
