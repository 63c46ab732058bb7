"""The direct-positive-evidence (DPE) filter: POSH App. C rules over CoNLL-U parses."""
