"""Formal languages for pre-pretraining (POSH §7 weak hierarchical bias): shuffled k-Dyck corpora and the trainer."""
