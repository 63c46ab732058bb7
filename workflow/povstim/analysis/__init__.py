"""Item scores -> accuracy tables, chi-square tests, Bayesian models, guardrails and acquisition timing.

One sub-package per question an analysis answers (modules keep the names the papers and configs use):

    tables/      what did each model get right?  tidy (item scores / count tables -> one tidy frame),
                 tables (accuracy, chi-square tests, POSH Tables 3 and 8), sensitivity (verdict flips under the
                 scoring metrics), exp3 (POSH §7: accuracy by inductive bias), released (published per-model
                 accuracies as input, ``povstim release``), conditions_page (the report's conditions table)
    models/      what does a Bayesian model say?  bayes (Bambi: POSH Table 12 and the three-level
                 BABY-F/BABY/WIKI model), formula (the formula language), power (power before training),
                 construction_delta (Δ accuracy per construction), dose (dose-response), prewarm and
                 prewarm_cli (the sampler compiled ahead of ``analyze``)
    guardrails/  can the result be trusted?  checks (undertrained, equal tokens, lexical preference, below
                 chance, ...), settings, cli (``povstim guardrails``), void (void contrasts refused)
    timing/      when is it acquired?  curves (learning curves), acquisition, acquisition_bayes,
                 acquisition_settings (acquisition points over words seen), age (age-equivalent scores),
                 children (children's age of first production), word_curves, word_learning,
                 word_learning_cli (word learning)

At the top: pipeline (the analysis settings and the whole ``povstim analyze`` run), archs (learners and
training order as factors), cli (``povstim analyze``: arguments and files only).
"""
