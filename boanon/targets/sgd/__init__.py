"""Distributed SGD on a heterogeneous parameter-server cluster (BOAT's case study), simulated.

``cluster`` holds the hardware and networks, ``simulator`` the timing model, ``runner`` the
registered ``sgd`` runner with its search space (``boanon generate sgd`` builds datasets).
"""

from boanon.targets.sgd.runner import SgdRunner, default_config, default_constraints, default_space

__all__ = ["SgdRunner", "default_config", "default_constraints", "default_space"]
