"""How a run's CPU jobs share the machine's cores."""

from __future__ import annotations

import os
from typing import Mapping

def job_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Variables the Snakefile sets for every job of a run (and the warm-start server, which must match them).

    ``OMP_WAIT_POLICY=PASSIVE``: torch's OpenMP threads sleep when idle instead of spinning on a core. A run's
    CPU jobs share the machine (``--cores 8`` on a 2-core laptop runs four 2-thread scoring jobs at once), and a
    spinning thread takes the core another job needs: four of the demo's score jobs at once on the 2-core
    development machine took 22.5-23.9 s spinning and 11.6-12.2 s sleeping (one thread each: 11.4-11.5 s),
    while a job alone was as fast either way (GPT-2 small, 2,000 pairs, 2 threads: 48.0-49.5 s vs 49.0-49.7 s;
    only work in tiny pieces pays for the wake-ups: a demo model's 0.13-s scoring pass takes 0.20 s). A value the
    user set is kept."""
    env = os.environ if env is None else env
    return {} if "OMP_WAIT_POLICY" in env else {"OMP_WAIT_POLICY": "PASSIVE"}
