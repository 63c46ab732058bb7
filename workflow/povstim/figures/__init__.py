"""Figures of the POSH-BENCH and BabyBERTa papers (PNG + PDF)."""
