"""When is it acquired? Learning curves, acquisition points over words seen (per seed and hierarchical),
age-equivalent scores, children's ages of first production, and word learning."""
