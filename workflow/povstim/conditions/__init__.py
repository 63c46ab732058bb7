"""Training conditions: BABY-F (DPE removed), BABY (DPE put back at a set rate), WIKI (unfiltered)."""
