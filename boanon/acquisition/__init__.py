"""Proposing the next configuration: surrogate selection, acquisition functions (EI, EHVI,
feasibility, registered by name), search, decomposition."""

from boanon.acquisition.base import (
    ACQUISITIONS,
    AcquisitionFunction,
    Problem,
    register_acquisition,
    stack_objectives,
)
from boanon.acquisition.build import build_acquisition, choose_acquisition
from boanon.acquisition.decompose import parameter_groups
from boanon.acquisition.ehvi import expected_hypervolume_improvement
from boanon.acquisition.ei import expected_improvement
from boanon.acquisition.feasibility import feasible_samples, probability_of_feasibility
from boanon.acquisition.optimize import SearchSettings, maximize
from boanon.acquisition.propose import Proposal, choose_model, maximize_acquisition, propose
from boanon.acquisition.scores import score_candidates
from boanon.acquisition.selection import cross_validate, select_surrogate

__all__ = ["ACQUISITIONS", "AcquisitionFunction", "Problem", "Proposal", "SearchSettings",
           "build_acquisition", "choose_acquisition", "choose_model", "cross_validate",
           "expected_hypervolume_improvement", "expected_improvement", "feasible_samples", "maximize",
           "maximize_acquisition", "parameter_groups", "probability_of_feasibility", "propose",
           "register_acquisition", "score_candidates", "select_surrogate", "stack_objectives"]
