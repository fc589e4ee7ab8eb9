import numpy as np
import pandas as pd
import pytest

from boanon.acquisition import expected_hypervolume_improvement, probability_of_feasibility, score_candidates
from boanon.multiobjective import OutputConstraint, Scalarization, hypervolume
from boanon.objectives import Objective

FRONT = np.array([[0.2, 0.8], [0.5, 0.5], [0.8, 0.2]])
REF = np.array([1.0, 1.0])


def brute_force_ehvi(samples):
    base = hypervolume(FRONT, REF)
    return np.array([[hypervolume(np.vstack([FRONT, samples[s, c]]), REF) - base
                      for c in range(samples.shape[1])] for s in range(samples.shape[0])]).mean(axis=0)


def test_ehvi_is_the_mean_improvement_of_joint_draws():
    rng = np.random.default_rng(0)
    samples = rng.normal(0.45, 0.2, size=(200, 4, 2))
    assert np.allclose(expected_hypervolume_improvement(samples, FRONT, REF), brute_force_ehvi(samples))


def test_correlation_between_objectives_changes_ehvi():
    """Same marginals, different joint law: positively correlated draws land on both sides of the
    front together and gain more than anti-correlated ones, which trade one objective for the other."""
    rng = np.random.default_rng(1)
    z = rng.normal(0.0, 0.25, size=(4000, 1))
    together = np.stack([0.5 + z, 0.5 + z], axis=-1)
    opposed = np.stack([0.5 + z, 0.5 - z], axis=-1)
    shuffled = np.stack([0.5 + z, 0.5 + rng.permutation(z)], axis=-1)  # independent
    ehvi = [expected_hypervolume_improvement(s, FRONT, REF)[0] for s in (together, opposed, shuffled)]
    assert ehvi[0] > ehvi[2] > ehvi[1]


def test_infeasible_draws_and_pending_points_gain_nothing():
    cand = np.tile(np.array([[0.3, 0.3]]), (10, 1, 1))
    full = expected_hypervolume_improvement(cand, FRONT, REF)[0]
    assert full == pytest.approx(hypervolume(np.vstack([FRONT, [0.3, 0.3]]), REF) - hypervolume(FRONT, REF))
    feasible = np.zeros((10, 1), dtype=bool)
    feasible[:4] = True
    assert expected_hypervolume_improvement(cand, FRONT, REF, feasible)[0] == pytest.approx(0.4 * full)


def table_of(points, area):
    return pd.DataFrame({"trial": [f"t{i}" for i in range(len(points))], "objective:energy": points[:, 0],
                         "objective:throughput": -points[:, 1], "metric:area": area})


OBJS = [Objective("energy"), Objective("throughput", "maximize")]


def test_score_candidates_uses_the_feasible_front_and_directions():
    table = table_of(FRONT, [1.0, 1.0, 9.0])  # the third trial breaks the area bound
    samples = {"energy": np.full((8, 2), 0.9), "throughput": np.full((8, 2), -0.1),
               "area": np.array([[1.0, 9.0]] * 8)}
    cons = [OutputConstraint("area", max=2.0)]
    scores, info = score_candidates(samples, table, OBJS, cons, ref_point=[1, -1])
    assert info["kind"] == "ehvi" and info["n_front"] == 2 and info["ref_point"] == [1.0, -1.0]
    # candidate 0 (minimised (0.9, 0.1)) fills the corner the infeasible trial left open below
    # the feasible front's (0.5, 0.5): 0.1 x 0.4; candidate 1 breaks the bound
    assert scores[0] == pytest.approx(0.1 * 0.4) and scores[1] == 0.0
    assert info["probability_of_feasibility"].tolist() == [1.0, 0.0]


def test_without_a_feasible_trial_the_score_is_the_probability_of_feasibility():
    table = table_of(FRONT, [5.0, 6.0, 7.0])
    samples = {"energy": np.zeros((4, 3)), "throughput": np.zeros((4, 3)),
               "area": np.array([[1.0, 3.0, 1.0], [1.0, 3.0, 3.0], [1.0, 3.0, 3.0], [3.0, 3.0, 3.0]])}
    cons = [OutputConstraint("area", max=2.0)]
    scores, info = score_candidates(samples, table, OBJS, cons)
    assert info["kind"] == "probability_of_feasibility"
    assert scores.tolist() == [0.75, 0.0, 0.25] == probability_of_feasibility(samples, cons).tolist()


def test_scalarisations():
    ideal, nadir = np.array([0.0, 10.0]), np.array([1.0, 20.0])
    y = np.array([[0.5, 15.0], [1.0, 10.0]])
    assert np.allclose(Scalarization("weighted_sum")(y, ideal, nadir), [0.5, 0.5])
    assert np.allclose(Scalarization("chebyshev", (0.5, 0.5), rho=0.0)(y, ideal, nadir), [0.25, 0.5])
    edp = Scalarization("product")
    assert np.allclose(edp(y, ideal, nadir, signs=[1, 1]), [7.5, 10.0])
    assert np.allclose(Scalarization("product", (1, 2))(y, ideal, nadir), [0.5 * 225, 100.0])  # ED^2P
    with pytest.raises(ValueError, match="all minimised"):
        edp(y, ideal, nadir, signs=[1, -1])
    table = table_of(FRONT, [1.0, 1.0, 1.0])
    samples = {"energy": np.array([[0.1, 0.9]]), "throughput": np.array([[-0.1, -0.9]])}
    scores, info = score_candidates(samples, table, OBJS, scalarization=Scalarization("weighted_sum"))
    assert info["kind"] == "scalarized_ei:weighted_sum" and scores[0] > 0 and scores[1] == 0.0
