"""The direct-positive-evidence (DPE) filter: POSH App. C rules over CoNLL-U parses."""

# The languages the DPE rules are written for (their lexicons and UD patterns are
# English). An experiment in another language runs its `filter: true` conditions
# unfiltered, and says so (povstim.plan.filter_applies). [issue 16; the phenomenon
# registry will hold this per phenomenon]
RULE_LANGUAGES: tuple[str, ...] = ("en",)
