"""Proposing the next configuration: surrogate selection, expected improvement, search, decomposition."""

from boanon.acquisition.decompose import parameter_groups
from boanon.acquisition.optimize import SearchSettings, maximize
from boanon.acquisition.propose import Proposal, propose
from boanon.acquisition.selection import cross_validate, select_surrogate

__all__ = ["Proposal", "SearchSettings", "cross_validate", "maximize", "parameter_groups", "propose",
           "select_surrogate"]
