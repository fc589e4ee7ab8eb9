"""Distributed SGD on a heterogeneous parameter-server cluster (BOAT's case study), simulated.

``cluster`` holds the hardware and networks, ``simulator`` the timing model, ``runner`` the
registered ``sgd`` runner and its search space, ``generate`` the dataset generator.
"""

from boanon.targets.sgd.runner import SgdRunner, default_config, default_space

__all__ = ["SgdRunner", "default_config", "default_space"]
