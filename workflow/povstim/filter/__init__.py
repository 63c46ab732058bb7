"""The direct-positive-evidence (DPE) filter: POSH App. C rules over CoNLL-U parses.

The rules themselves, and the languages each is written for, are the phenomenon registry
(povstim.dpe); an experiment in a language without rules runs its `filter: true` conditions
unfiltered and says so (povstim.plan.filter_applies).
"""
