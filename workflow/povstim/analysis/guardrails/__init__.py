"""Can the result be trusted? The checks a reviewer would ask for (guardrails.checks), their settings, the
stage's command line, and void contrasts."""
