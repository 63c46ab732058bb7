"""Item scores -> accuracy tables, chi-square tests and the Bayesian mixed model.

Modules:
    tidy      read item-score parquet files / aggregated count tables into one tidy frame
    tables    accuracy per model x paradigm/category, chi-square tests, POSH Tables 3 and 8
    bayes     the Bambi mixed-effects logistic regression of POSH Table 12
    simulate  item data from known coefficients (tests, benchmark, parameter recovery)
    cli       ``povstim analyze``
"""
