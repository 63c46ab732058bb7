"""Figures of the POSH-BENCH and BabyBERTa papers (PNG + PDF); ``povstim release`` (release_cli.py), which
writes the analysis tables and the figures from published accuracies."""
