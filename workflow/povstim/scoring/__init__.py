"""Scoring minimal pairs with language models (and baselines scored like models)."""
