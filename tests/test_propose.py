import numpy as np
import pandas as pd
import pytest

from boanon.acquisition import Proposal, propose
from boanon.objectives import Objective
from boanon.space import Float, Space
from boanon.synthetic import SyntheticSystem
from boanon.table import records_to_table

COST = [Objective("cost")]


@pytest.fixture(scope="module")
def system():
    return SyntheticSystem(n_params=6, n_groups=2, chain_length=2, n_distractors=3, n_duplicates=1, seed=3)


def test_structured_proposal_is_valid_and_explained(system):
    table = system.sample_table(20, seed=1)
    p = propose(system.space, table, COST, graph=system.true_graph(), rng=np.random.default_rng(0))
    assert isinstance(p, Proposal)
    system.space.validate(p.config)
    assert p.surrogate == "structured"  # the true graph cross-validates better
    assert "CV" in p.reason and set(p.info["cv"]) == {"structured", "gp"}
    assert p.info["acquisition"]["kind"] == "ei" and p.info["acquisition"]["value"] >= 0
    assert {"mean", "sd"} <= set(p.info["predicted"]["cost"])
    # each subsystem's load is a bowl in its parameters, the cost a sum: the forms say so
    forms = p.info["structure"]["forms"]
    assert forms["g0_load"]["form"] == forms["g1_load"]["form"] == "quadratic"
    assert forms["cost"]["form"] == "affine" and p.info["structure"]["node_models"]["cost"] == "formula"
    assert p.info["groups"] == [grp.params for grp in system.groups]


def test_strategies_without_graph_and_random(system):
    table = system.sample_table(8, seed=2)
    gp = propose(system.space, table, COST, proposer="structured", rng=np.random.default_rng(1))
    assert gp.surrogate == "gp" and gp.reason.startswith("no graph given")
    rnd = propose(system.space, table, COST, proposer="random", rng=np.random.default_rng(1))
    assert rnd.surrogate == "random"
    system.space.validate(rnd.config)
    with pytest.raises(ValueError, match="unknown strategy"):
        propose(system.space, table, COST, proposer="magic")


def test_a_proposal_without_a_generator_is_seeded(system):
    table = system.sample_table(8, seed=2)
    first, again = (propose(system.space, table, COST, proposer="random") for _ in range(2))
    assert first.config == again.config
    assert propose(system.space, table, COST, proposer="random", rng=1).config == \
        propose(system.space, table, COST, proposer="random", rng=np.random.default_rng(1)).config


def test_each_strategy_is_a_proposer_naming_its_candidate_surrogates(system):
    from boanon.acquisition.proposers import Proposer, make_proposer
    from boanon.strategies import STRATEGIES, strategy_names

    assert all(issubclass(STRATEGIES.get(name), Proposer) for name in strategy_names())
    table, graph = system.sample_table(8, seed=2), system.true_graph()

    def names(strategy, graph):
        candidates, note = make_proposer(strategy).candidates(system.space, table, COST, graph, [],
                                                              np.random.default_rng(0))
        return [c.name for c in candidates], note

    assert names("structured", graph) == (["structured", "gp"], "")
    assert names("structured", None) == (["gp"], "no graph given: ")
    assert names("gp", graph) == (["gp"], "") and names("random", graph) == ([], "")


def test_too_few_trials_gives_random(system):
    table = system.sample_table(1, seed=2)
    p = propose(system.space, table, COST, graph=system.true_graph(), rng=np.random.default_rng(0))
    assert p.surrogate == "random" and "too few" in p.reason


def test_propose_loop_proposes_new_modelled_configurations_it_rates_well(system):
    """The loop's mechanism: each proposal is modelled (not random), new, rated by its model
    better than a typical design trial, and lands there on the system. Whether a handful of
    proposals beats the design's best is an outcome (it turned on the machine's floating-point
    rounding: this test asserted it and failed on a fresh AMD machine); benchmarks/ measures it."""
    rng = np.random.default_rng(5)
    configs = system.space.sample(8, rng)
    records = [system.record(f"t{i}", c) for i, c in enumerate(configs)]
    typical = float(np.median([r.objectives["cost"] for r in records]))
    graph = system.true_graph()
    for i in range(6):
        p = propose(system.space, records_to_table(records), COST, graph=graph, rng=rng)
        assert p.surrogate in ("structured", "gp") and p.config not in [r.params for r in records]
        assert p.info["predicted"]["cost"]["mean"] < typical
        records.append(system.record(f"p{i}", p.config))
    assert np.median([r.objectives["cost"] for r in records[8:]]) < typical


def test_pending_configurations_are_not_proposed_again(system):
    table = system.sample_table(15, seed=4)
    graph = system.true_graph()
    first = propose(system.space, table, COST, graph=graph, rng=np.random.default_rng(0))
    second = propose(system.space, table, COST, graph=graph, rng=np.random.default_rng(0),
                     pending=[first.config])
    assert second.config != first.config
    assert second.info["n_pending"] == 1


def test_maximised_objectives_are_handled_by_sign():
    space = Space([Float("x", 0.0, 1.0)])
    xs = np.linspace(0.3, 0.7, 7)
    table = pd.DataFrame({"trial": range(7), "param:x": xs, "objective:speed": 10 * xs})
    up = propose(space, table, [Objective("speed", "maximize")], proposer="gp", rng=np.random.default_rng(0))
    down = propose(space, table, [{"name": "speed", "direction": "minimize"}], proposer="gp",
                   rng=np.random.default_rng(0))
    assert up.config["x"] > 0.7 and down.config["x"] < 0.3
    assert up.info["acquisition"]["incumbent"] == pytest.approx(7.0, abs=0.3)
    assert down.info["acquisition"]["incumbent"] == pytest.approx(3.0, abs=0.3)


def test_the_early_phase_searches_near_the_best_trials_only(system):
    table = system.sample_table(8, seed=4)
    early = propose(system.space, table, COST, proposer="gp", rng=np.random.default_rng(0))
    late = propose(system.space, table, COST, proposer="gp", rng=np.random.default_rng(0), early_trials=0)
    assert early.info["acquisition"]["trust_region"] == pytest.approx(0.2)
    assert late.info["acquisition"]["trust_region"] is None


def test_a_trust_region_scores_only_changes_of_a_few_parameters_of_the_starts():
    from boanon.acquisition.optimize import SearchSettings, config_key, maximize

    space = Space.from_dict({f"x{i}": {"type": "float", "low": 0.0, "high": 1.0, "default": 0.5}
                             for i in range(12)})
    start = space.default()
    seen: list[dict] = []

    def score(configs, n_samples):
        seen.extend(configs)
        return np.array([-sum((c[n] - 0.9) ** 2 for n in c) for c in configs])

    settings = SearchSettings(n_sobol=64, n_local=0, local_rounds=0, trust_region=0.2, trust_changes=1,
                              gradient_steps=0)  # the gradient ascent moves all: tested on its own
    maximize(space, score, np.random.default_rng(0), starts=[start], settings=settings)
    changed = [sum(c[n] != start[n] for n in space.names) for c in {config_key(c): c for c in seen}.values()]
    # all but the one neighbour of the start's own pass (up to 3 changes) change one parameter
    assert len(changed) > 40 and sum(k <= 1 for k in changed) >= len(changed) - 1
    seen.clear()
    maximize(space, score, np.random.default_rng(0), starts=[start],
             settings=SearchSettings(n_sobol=64, local_rounds=0))
    assert max(sum(c[n] != start[n] for n in space.names) for c in seen) == 12  # a global design


def test_when_the_plain_gp_is_chosen_the_structured_strategy_proposes_what_the_gp_strategy_does(system):
    """The graph's model competing must not change the proposal when it loses: its draws (folds,
    safety net) come from a generator of their own, not the acquisition's."""
    from boanon.graph import CausalGraph, Edge

    table = system.sample_table(12, seed=4)
    first = system.space.names[0]
    poor = CausalGraph(roles={first: "param", "cost": "objective"}, edges=[Edge(first, "cost")])
    structured = propose(system.space, table, COST, graph=poor, rng=np.random.default_rng(5))
    gp = propose(system.space, table, COST, proposer="gp", rng=np.random.default_rng(5))
    assert structured.surrogate == "gp", structured.reason
    assert structured.config == gp.config


def test_a_fully_run_discrete_space_gets_a_repeat_not_an_error():
    # every configuration of a 2 x 3 space has been run: the run goes on with a repeat of the
    # most promising one (before, maximize raised "no feasible configuration left to propose")
    from boanon.space import Categorical, Int

    space = Space([Categorical("c", ("a", "b")), Int("k", 0, 2)])
    rows = [{"trial": f"t{i}", "param:c": c, "param:k": k, "objective:cost": float(k + (c == "b"))}
            for i, (c, k) in enumerate((c, k) for c in "ab" for k in range(3))]
    p = propose(space, pd.DataFrame(rows), ["cost"], proposer="gp", rng=np.random.default_rng(0))
    assert p.info["acquisition"]["repeat"] is True
    assert space.validate(p.config) == p.config
