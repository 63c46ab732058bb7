"""Byte-level BPE tokenizers trained per condition x size (POSH §4.1)."""
