"""What does a Bayesian model say? Bambi models (POSH Table 12, three-level), the formula language, power
before training, Δ accuracy per construction, dose-response, and the sampler's prewarm."""
