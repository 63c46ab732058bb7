"""Training language models: the GPT-2 family (POSH Table 5) and BabyBERTa (RoBERTa MLM)."""
