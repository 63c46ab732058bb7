"""Devices, one concern a module:

* :mod:`.slots` — which torch device a job runs on, and the GPU slot (a lock file) it holds;
* :mod:`.precision` — what a GPU's tensor cores take (``training.precision`` on a device);
* :mod:`.sharing` — which jobs share a GPU: memory estimates and the machine's GPUs (nvidia-smi);
* :mod:`.threads` — how a run's CPU jobs share the cores.

Import from the module that holds the concern, so a stage's code hash (povstim.codehash) covers
what it uses and no more.
"""

