"""Item scores -> accuracy tables, chi-square tests and the Bayesian mixed model.

Modules:
    tidy      read item-score parquet files / aggregated count tables into one tidy frame
    tables    accuracy per model x paradigm/category, chi-square tests, POSH Tables 3 and 8
    curves    learning curves: accuracy per model x training step
    bayes     the Bambi mixed-effects logistic regression of POSH Table 12
    formula   the model formula language (fixed effects, interactions, group terms)
    pipeline  the analysis settings and the whole ``povstim analyze`` run
    cli       ``povstim analyze`` (arguments and files only)
"""
