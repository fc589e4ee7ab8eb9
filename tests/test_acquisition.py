import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from boanon.acquisition import expected_improvement, maximize, parameter_groups, select_surrogate
from boanon.acquisition.optimize import SearchSettings
from boanon.acquisition.selection import MARGIN, _held_out, capped_gain
from boanon.graph import CausalGraph, Edge
from boanon.models import DAGSurrogate, PlainGPSurrogate
from boanon.objectives import Objective
from boanon.space import Bool, Categorical, Float, Int, Space
from boanon.synthetic import SyntheticSystem


def test_mc_expected_improvement_matches_the_closed_form():
    rng = np.random.default_rng(0)
    mu, sd, best = np.array([0.0, 1.0, 2.0]), np.array([1.0, 0.5, 2.0]), 0.5
    samples = mu + sd * rng.standard_normal((200_000, 3))
    z = (best - mu) / sd
    exact = (best - mu) * norm.cdf(z) + sd * norm.pdf(z)
    np.testing.assert_allclose(expected_improvement(samples, best), exact, rtol=0.02)


def test_expected_improvement_properties():
    rng = np.random.default_rng(1)
    base = rng.standard_normal((4000, 1))
    narrow, wide = 1.0 + 0.1 * base, 1.0 + 2.0 * base
    ei = expected_improvement(np.hstack([narrow, wide, 5.0 + 0 * base]), best=0.0)
    assert np.all(ei >= 0)
    assert ei[2] == 0.0  # never below the incumbent: nothing to gain
    assert ei[1] > ei[0]  # same mean, more spread: more to gain


def _graph(edges, params, metrics, objectives):
    roles = {**dict.fromkeys(params, "param"), **dict.fromkeys(metrics, "metric"),
             **dict.fromkeys(objectives, "objective")}
    return CausalGraph(roles=roles, edges=[Edge(a, b) for a, b in edges])


def test_decomposition_follows_disjoint_subgraphs():
    space = Space([Float(n, 0, 1) for n in ("a", "b", "c", "d", "e")])
    graph = _graph([("a", "m1"), ("b", "m1"), ("m1", "y"), ("c", "m2"), ("m2", "y"), ("d", "y"),
                    ("a", "side"), ("c", "side")], "abcde", ["m1", "m2", "side"], ["y"])
    # side joins a and c but does not reach y; e reaches nothing
    assert parameter_groups(space, graph, ["y"]) == [["a", "b"], ["c"], ["d"]]
    graph.edges.append(Edge("m1", "m2"))  # now the subgraphs meet before the objective
    assert parameter_groups(space, graph, ["y"]) == [["a", "b", "c"], ["d"]]


def test_constraints_join_groups():
    space = Space([Float(n, 0, 1) for n in "abc"], constraints=["a < c"])
    graph = _graph([("a", "y"), ("b", "y"), ("c", "y")], "abc", [], ["y"])
    assert parameter_groups(space, graph, ["y"]) == [["a", "c"], ["b"]]


def test_synthetic_groups_are_recovered():
    system = SyntheticSystem(n_params=9, n_groups=3, seed=0)
    groups = parameter_groups(system.space, system.true_graph(), ["cost"])
    assert sorted(map(sorted, groups)) == sorted(sorted(g.params) for g in system.groups)


MIXED = Space([Int("n", 1, 100, log=True), Float("r", 0.0, 1.0), Categorical("c", ("a", "b", "c")),
               Bool("f")], constraints=["n < 80 or not f"])


def _score(configs, n_samples):
    """Peak at n=10, r=0.3, c='b', f=True (which forces n < 80)."""
    return np.array([-(np.log10(cfg["n"]) - 1) ** 2 - (cfg["r"] - 0.3) ** 2 + (cfg["c"] == "b")
                     + 0.5 * cfg["f"] for cfg in configs])


def test_maximize_over_a_mixed_constrained_space():
    rng = np.random.default_rng(0)
    best, value, info = maximize(MIXED, _score, rng)
    assert best["c"] == "b" and best["f"] is True
    assert 6 <= best["n"] <= 16 and abs(best["r"] - 0.3) < 0.08
    assert MIXED.is_feasible(best) and info["n_scored"] > 256


def test_maximize_never_returns_an_excluded_configuration():
    rng = np.random.default_rng(1)
    first, _, _ = maximize(MIXED, _score, rng, settings=SearchSettings(n_sobol=64))
    second, _, _ = maximize(MIXED, _score, rng, exclude=[first], starts=[first],
                            settings=SearchSettings(n_sobol=64))
    assert second != first


def test_group_rounds_search_each_group():
    space = Space([Float(f"x{i}", 0, 1) for i in range(8)])
    target = np.linspace(0.1, 0.9, 8)

    def score(configs, n_samples):
        return np.array([-np.sum((np.array([c[f"x{i}"] for i in range(8)]) - target) ** 2) for c in configs])

    groups = [[f"x{i}" for i in range(4)], [f"x{i}" for i in range(4, 8)]]
    settings = SearchSettings(n_sobol=64, local_rounds=1, group_rounds=3)
    best, value, info = maximize(space, score, np.random.default_rng(2), groups=groups, settings=settings)
    assert info["n_groups"] == 2 and value > -0.05


def _true_graph_and_plain_gp(n: int, seed: int) -> tuple[pd.DataFrame, list]:
    """``n`` random trials of a chain system and both candidates fitted to them: its true graph's
    model and the plain GP."""
    system = SyntheticSystem(n_params=8, n_groups=2, chain_length=3, seed=seed)
    table = system.sample_table(n, seed=seed)
    objectives = [Objective("cost")]
    return table, [DAGSurrogate(system.space, system.true_graph(), objectives).fit(table),
                   PlainGPSurrogate(system.space, objectives).fit(table)]


@pytest.mark.parametrize("seed", [0, 1])
def test_cross_validation_picks_the_structured_model_when_the_true_graph_is_given(seed):
    table, models = _true_graph_and_plain_gp(30, seed)
    chosen, reason, scores = select_surrogate(models, table, np.random.default_rng(seed))
    assert chosen.name == "structured", reason
    assert scores["structured"]["rank_correlation"] > scores["gp"]["rank_correlation"]
    assert "chose structured" in reason and scores["gp"]["n_folds"] == 5


@pytest.mark.parametrize("n, folds", [(12, 12), (20, 20), (21, 5)])
def test_a_few_trials_are_held_out_one_by_one(n, folds):
    """Up to LEAVE_ONE_OUT_TRIALS trials the choice leaves each trial out alone: five folds of
    two or three trials made the split, not the models, decide."""
    table, models = _true_graph_and_plain_gp(n, 0)
    _, reason, scores = select_surrogate(models, table, np.random.default_rng(0))
    assert scores["gp"]["n_folds"] == scores["structured"]["n_folds"] == folds
    assert reason.startswith(f"{folds}-fold CV log predictive density on {n} trials")


def _wrong_graph(system: SyntheticSystem):
    """The true graph with the first chain metric of group 0 driven by a parameter of group 1."""
    wrong = system.true_graph()
    grp = system.groups[0]
    wrong.edges = [e for e in wrong.edges if not (e.source in grp.params and e.target == grp.chain[0])]
    wrong.edges.append(Edge(system.groups[1].params[0], grp.chain[0]))  # the wrong parameter
    return wrong


def test_a_wrong_learned_edge_is_repaired_by_the_node_safety_net():
    system = SyntheticSystem(n_params=6, n_groups=2, chain_length=2, n_distractors=2, seed=3)
    table = system.sample_table(30, seed=3)
    objectives = [Objective("cost")]
    dag = DAGSurrogate(system.space, _wrong_graph(system), objectives).fit(table)
    replaced = dag.report_["safety_net"]
    assert set(replaced[system.groups[0].chain[0]]["parents"]) >= set(system.groups[0].params)
    chosen, reason, _ = select_surrogate([dag, PlainGPSurrogate(system.space, objectives).fit(table)],
                                         table, np.random.default_rng(0))
    assert chosen.name == "structured", reason


def test_cross_validation_prefers_the_plain_gp_over_a_wrong_annotation():
    """An annotated function is the user's word (never replaced); when it is wrong the GP wins."""
    system = SyntheticSystem(n_params=6, n_groups=2, chain_length=2, n_distractors=2, seed=3)
    table = system.sample_table(30, seed=3)
    wrong = _wrong_graph(system)
    wrong.node_models["cost"] = {"function": system.groups[0].chain[-1]}  # group 1 left out
    objectives = [Objective("cost")]
    models = [DAGSurrogate(system.space, wrong, objectives).fit(table),
              PlainGPSurrogate(system.space, objectives).fit(table)]
    chosen, reason, _ = select_surrogate(models, table, np.random.default_rng(0))
    assert chosen.name == "gp", reason


def test_too_few_trials_skip_cross_validation():
    system = SyntheticSystem(n_params=4, n_groups=2, seed=0)
    table = system.sample_table(4)
    models = [PlainGPSurrogate(system.space, [Objective("cost")]).fit(table)] * 2
    chosen, reason, scores = select_surrogate(models, table, np.random.default_rng(0))
    assert scores == {} and "too few" in reason


def test_a_surrogate_that_cannot_be_cross_validated_loses_with_the_reason():
    rng = np.random.default_rng(0)
    space = Space([Float("x", 0, 1)])
    x = rng.random(20)
    table = pd.DataFrame({"trial": range(20), "param:x": x, "metric:m": np.nan, "objective:y": x**2})
    table.loc[0, "metric:m"] = 1.0  # logged once: every fold holding that trial leaves m without data
    graph = _graph([("x", "m"), ("m", "y")], "x", ["m"], ["y"])
    models = [DAGSurrogate(space, graph, [Objective("y")]).fit(table),
              PlainGPSurrogate(space, [Objective("y")]).fit(table)]
    chosen, reason, scores = select_surrogate(models, table, rng)
    assert chosen.name == "gp"
    assert "structured failed (ValueError: no trial has values for node 'm'" in reason
    assert scores["structured"]["log_predictive_density"] == -np.inf


def test_decomposition_sees_the_inputs_of_node_models():
    space = Space([Float(n, 0, 1) for n in "ab"])
    graph = _graph([("a", "energy"), ("b", "latency")], "ab", ["energy", "latency"], ["edp"])
    assert parameter_groups(space, graph, ["edp"]) == []  # nothing reaches edp through edges
    graph.node_models["edp"] = {"function": "energy * latency"}
    assert parameter_groups(space, graph, ["edp"]) == [["a"], ["b"]]


def test_candidates_are_scored_on_common_random_numbers():
    """Every configuration of one call gets the same draws, and a repeated call the same values: an
    acquisition search then compares candidates, not Monte-Carlo noise. With independent draws 8
    screening samples ranked near-equal candidates by noise."""
    from boanon.acquisition.build import build_acquisition

    system = SyntheticSystem(n_params=4, n_groups=2, seed=0)
    table = system.sample_table(12, seed=0)
    objective = Objective("cost")
    model = PlainGPSurrogate(system.space, [objective]).fit(table)
    config = system.space.default()
    twice = model.sample([config, config], 8, np.random.default_rng(0))["cost"]
    np.testing.assert_array_equal(twice[:, 0], twice[:, 1])
    score = build_acquisition(model, table, [objective], [], np.random.default_rng(0))
    candidates = system.space.sample(16, np.random.default_rng(1))
    np.testing.assert_array_equal(score(candidates, 8), score(candidates, 8))
    np.testing.assert_array_equal(score(candidates, 8)[3:5], score(candidates[3:5], 8))


def test_the_trust_region_search_moves_every_continuous_parameter_a_little():
    """In 40 dimensions the best nearby configuration changes all parameters slightly; random
    moves of a few parameters from the start leave most of the way untravelled."""
    space = Space([Float(f"x{i}", 0, 1, default=0.5) for i in range(40)])
    target = 0.5 + 0.05 * np.where(np.arange(40) % 3 == 0, 1.0, -1.0)

    def score(configs, n_samples):
        return np.array([-np.sum((np.array([c[f"x{i}"] for i in range(40)]) - target) ** 2) for c in configs])

    start = space.default()
    settings = SearchSettings(n_sobol=64, trust_region=0.2)
    _, value, _ = maximize(space, score, np.random.default_rng(3), starts=[start], exclude=[start],
                           settings=settings)
    assert score([start], 1)[0] == pytest.approx(-0.1)
    assert value > -0.01


def test_the_gradient_ascent_starts_from_the_incumbent_even_though_it_is_not_proposed_again():
    space = Space([Float(f"x{i}", 0, 1, default=0.5) for i in range(20)])
    target = 0.5 + 0.04 * np.where(np.arange(20) % 2 == 0, 1.0, -1.0)

    def score(configs, n_samples):
        return np.array([-np.sum((np.array([c[f"x{i}"] for i in range(20)]) - target) ** 2) for c in configs])

    incumbent = space.default()
    settings = SearchSettings(n_sobol=16, n_local=0, local_rounds=0, trust_region=0.2, gradient_starts=0)
    best, value, _ = maximize(space, score, np.random.default_rng(4), starts=[incumbent], exclude=[incumbent],
                              settings=settings)
    assert best != incumbent and value > -0.002  # from -0.032 at the incumbent


class _UnmarkedGP(PlainGPSurrogate):
    """The plain GP under another name and not marked as the reference: an alternative that
    predicts exactly as well as the reference."""

    name = "copy"
    reference = False


def test_an_alternative_no_better_than_the_reference_leaves_the_reference_chosen():
    system = SyntheticSystem(n_params=4, n_groups=2, seed=0)
    table = system.sample_table(20, seed=0)
    objectives = [Objective("cost")]
    models = [_UnmarkedGP(system.space, objectives).fit(table),
              PlainGPSurrogate(system.space, objectives).fit(table)]
    chosen, reason, scores = select_surrogate(models, table, np.random.default_rng(0))
    # the same folds and draws for both: equal models score equally, and the tie goes to the reference
    assert scores["copy"]["log_predictive_density"] == scores["gp"]["log_predictive_density"]
    assert chosen.name == "gp" and "no alternative beats gp by > 0.1" in reason
    chosen, reason, _ = select_surrogate(models, table.iloc[:4], np.random.default_rng(0))
    assert chosen.name == "gp" and "too few" in reason  # too few trials: the reference, listed second


def clearly_better(alternative: np.ndarray, reference: np.ndarray, cap: float = 2.0) -> bool:
    """The choice's test of an alternative against the reference (select_surrogate)."""
    return capped_gain(alternative, reference, cap) > MARGIN


def test_clearly_better_needs_the_margin():
    reference = np.zeros(10)
    assert clearly_better(reference + 0.3, reference)
    assert not clearly_better(reference + 0.05, reference)  # below the margin
    assert not clearly_better(np.full(10, np.nan), reference)  # a non-finite prediction never wins
    assert clearly_better(reference, np.full(10, -np.inf))


def test_one_trial_counts_for_at_most_the_cap_either_way():
    reference = np.zeros(12)
    # better on ten held-out trials, two overconfident misses of 10 nats: the mean says worse
    assert clearly_better(np.r_[np.full(10, 1.0), -10.0, -10.0], reference)
    assert not clearly_better(np.r_[np.full(10, 1.0), -10.0, -10.0], reference, cap=np.inf)
    # slightly worse on eleven, one lucky hit of 20 nats: the mean says better
    assert not clearly_better(np.r_[np.full(11, -0.1), 20.0], reference)
    # a non-finite prediction is not capped: it still never wins
    assert not clearly_better(np.r_[np.full(11, 1.0), np.nan], reference)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_reason_shows_the_capped_gain_the_choice_read(seed):
    """The reason listed each model's mean held-out density, which counts every trial in full,
    beside a verdict reached on capped per-trial gains, so it could read "structured -1.644, gp
    -0.580; structured beats gp by > 0.1": it now shows the gain the choice read."""
    table, models = _true_graph_and_plain_gp(12, seed)
    chosen, reason, _ = select_surrogate(models, table, np.random.default_rng(seed))
    folds = int(np.random.default_rng(seed).integers(2**63))  # select_surrogate's draw: the same folds
    held_out = {m.name: _held_out(m, table, np.random.default_rng(folds), len(table))[1] for m in models}
    gain = capped_gain(held_out["structured"], held_out["gp"])
    assert f"per held-out trial over gp, each capped at 2 nats: structured {gain:+.3f}" in reason
    assert (chosen.name == "structured") <= (gain > MARGIN)  # chosen only on a gain above the margin
