"""MSGS (Warstadt et al. 2020): generated control and ambiguous tasks, in povstim's own vocabulary."""
