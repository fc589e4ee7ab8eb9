"""Several objectives: Pareto fronts, hypervolume, scalarisations, output constraints (their
acquisition, EHVI and feasibility of candidates, is in :mod:`boanon.acquisition`)."""

from boanon.multiobjective.feasibility import (
    OutputConstraint,
    observed_feasible,
    parse_output_constraints,
)
from boanon.multiobjective.hypervolume import hypervolume, hypervolume_improvement, nondominated_boxes
from boanon.multiobjective.pareto import (
    infer_reference_point,
    nondominated_ranks,
    objective_matrix,
    pareto_front,
    pareto_mask,
    parse_ref_point,
    reference_point,
)
from boanon.multiobjective.scalarize import Scalarization
from boanon.multiobjective.summary import (
    PARETO,
    format_feasible,
    format_front,
    front_table,
    hypervolume_trace,
    pareto_flags,
    table_hypervolume,
)

__all__ = [
    "PARETO", "OutputConstraint", "Scalarization", "format_feasible", "format_front",
    "front_table", "hypervolume", "hypervolume_improvement", "hypervolume_trace", "infer_reference_point",
    "nondominated_boxes", "nondominated_ranks", "objective_matrix", "observed_feasible", "pareto_flags",
    "pareto_front", "pareto_mask", "parse_output_constraints", "parse_ref_point",
    "reference_point",
    "table_hypervolume",
]
