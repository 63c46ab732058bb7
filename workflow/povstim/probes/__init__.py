"""Fine-tuning probes of trained models (``povstim probe``): MSGS (docs/probes.md)."""
