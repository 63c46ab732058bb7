"""Item scores -> accuracy tables, chi-square tests and the Bayesian mixed model.

Modules:
    tidy      read item-score parquet files / aggregated count tables into one tidy frame
    tables    accuracy per model x paradigm/category, chi-square tests (pooled or POSH's per-seed
              procedure), POSH Tables 3 and 8
    sensitivity  accuracy and verdict flips under sum/mean x BOS/no-BOS scoring
    curves    learning curves: accuracy per model x training step
    bayes     the Bambi mixed-effects logistic regressions: POSH Table 12 and the three-level
              BABY-F/BABY/WIKI model with pairwise contrasts
    released  published per-model accuracy files -> counts (``povstim release``: figures/release_cli.py)
    formula   the model formula language (fixed effects, interactions, group terms)
    pipeline  the analysis settings and the whole ``povstim analyze`` run
    prewarm   the Bayesian model compiled into PyTensor's cache on idle CPUs before ``analyze`` needs it
    cli       ``povstim analyze`` (arguments and files only)
    prewarm_cli  ``povstim analyze-prewarm`` (arguments only; a Snakemake run starts it)
"""
