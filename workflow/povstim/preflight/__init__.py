"""Before and around a run: checking a config (``povstim check``), planning what it will use
(``povstim plan``), building its report (``povstim report``) and the Snakefile's run-time guards
(a report built for the wrong experiment, a stale lock, what to say when a run ends)."""
