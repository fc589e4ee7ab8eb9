"""The offline diagnostics: pool_picks draws each trial once from the pool; rank_evidence counts
new bests; early_models's candidates, expected improvement and summary."""

import numpy as np
import pytest

from benchmarks.pool_picks import BUDGET, DESIGN, Pool


@pytest.fixture(scope="module")
def pool():
    return Pool("rocksdb-readrandomwriterandom", "cpu_micros_per_op")


def test_the_pool_is_the_dataset_read_with_its_space(pool):
    assert len(pool.y) == len(pool.configs) == pool.X.shape[0] == 40
    assert np.isfinite(pool.y).all() and sorted(pool.rank) == list(range(40))


@pytest.mark.parametrize("policy", ["random", "mean-8", "ei-all", "loop"])
def test_every_policy_picks_an_unseen_trial(pool, policy):
    seen = [int(i) for i in np.random.default_rng(0).permutation(40)[:DESIGN + 2]]
    picked = pool.pick(policy, seen, np.random.default_rng(1), seed=0)
    assert 0 <= picked < 40 and picked not in seen


def test_a_run_scores_the_best_of_its_trials(pool):
    """The best of 10 distinct trials ranks at most 30th of 40, and no worse than its design's best."""
    design = np.random.default_rng(3).permutation(40)[:DESIGN]  # the run's first draws
    rank = pool.run("random", seed=3)
    assert 0 <= rank <= 40 - BUDGET and rank <= pool.rank[design].min()


def test_rank_evidence_counts_new_bests_by_whether_the_model_ranked():
    import pandas as pd

    from benchmarks.rank_evidence import summary

    table = pd.DataFrame({"problem": ["a", "a", "a", "b"], "seed": 0, "step": [6, 7, 8, 6],
                          "rank_correlation": [-0.5, 0.0, 0.7, 0.9], "new_best": [True, False, True, False]})
    rows = {(r.problem, r["model ranks held-out trials"]): (r.proposals, r["new bests"])
            for _, r in summary(table).iterrows()}
    assert rows == {("a", False): (2, 1), ("a", True): (1, 1), ("b", True): (1, 0),
                    ("all", False): (2, 1), ("all", True): (2, 1)}


def test_early_models_candidates_move_the_numbers_and_keep_the_switches():
    from benchmarks.early_models import N_CANDIDATES, candidates
    from benchmarks.problems import make_problem

    space = make_problem("pipeline").space
    incumbent = space.default()
    tests = candidates(space, incumbent, 0.15, np.random.default_rng(0))
    assert len(tests) == N_CANDIDATES and all(space.is_feasible(c) for c in tests)
    assert all(c[n] == incumbent[n] for c in tests for n in space.switch_names)
    floats = [n for n in space.numeric_names if type(space.params[n]).__name__ == "Float"]
    inside = [n for n in floats if 0.0 < space.params[n].to_unit(incumbent[n]) < 1.0]
    at_low = [n for n in floats if space.params[n].to_unit(incumbent[n]) == 0.0]
    assert inside and all(c[n] != incumbent[n] for c in tests for n in inside)
    # a number at its lower bound stays there whenever its step is negative: about half the time
    assert at_low and 0.35 < np.mean([c[n] == incumbent[n] for c in tests for n in at_low]) < 0.65
    steps = np.abs(space.encode(tests) - space.encode([incumbent]))
    assert 0.05 < np.median(steps[steps > 0]) < 0.2  # a normal step of 0.15 on the unit scale


def test_early_models_expected_improvement_is_the_analytic_one():
    from scipy.stats import norm

    from benchmarks.early_models import expected_improvement

    mean, sd = np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.0, 0.0])
    z = (2.0 - mean[:2]) / sd[:2]
    expected = (2.0 - mean[:2]) * norm.cdf(z) + sd[:2] * norm.pdf(z)
    assert expected_improvement(mean, sd, best=2.0)[:2] == pytest.approx(expected)
    assert expected_improvement(mean, sd, best=2.0)[2] == pytest.approx(0.0)  # no spread, no gain
    assert expected_improvement(np.array([1.0]), np.array([0.0]), best=2.0)[0] == pytest.approx(1.0)


def test_early_models_summary_averages_over_seeds_and_sizes():
    import pandas as pd

    from benchmarks.early_models import summarise

    rows = pd.DataFrame({"problem": "p", "seed": [0, 0, 1, 1], "trials": [6, 9, 6, 9], "model": "m",
                         "rank_correlation": [0.1, 0.2, 0.3, 0.6], "mean_pick_gap": [1.0, 0.0, 1.0, 0.0],
                         "ei_pick_gap": [2.0, 0.0, 0.0, 0.0], "best_candidate_gap": -1.0,
                         "lengthscale_min": [0.1, 0.2, 0.3, 0.4], "lengthscale_median": 4.0})
    row = summarise(rows).iloc[0]
    assert row.cells == 4 and row.rank_corr_mean == pytest.approx(0.3)
    assert row.rank_corr_median == pytest.approx(0.25)
    assert row.ei_pick_gap == pytest.approx(0.5) and row.ei_pick_gap_median == 0.0
    assert row.lengthscale_min == pytest.approx(0.25) and row.lengthscale_median == 4.0


def test_posterior_pick_writes_both_picks_as_runs_the_remeasurement_reads(tmp_path):
    """Each pick is an observed trial: the measured one has the run's best value, and both tables
    are runs.csv rows with the picked configuration (what rocksdb_remeasure runs again)."""
    import json

    import pandas as pd

    from benchmarks.posterior_pick import main as posterior_pick
    from benchmarks.rocksdb_remeasure import finished_runs

    posterior_pick(["--problem", "synthetic", "--seeds", "1", "--budget", "6", "--out", str(tmp_path)])
    picks = pd.read_csv(tmp_path / "picks.csv").iloc[0]
    runs, _ = finished_runs([tmp_path / "measured", tmp_path / "posterior"], "synthetic")
    by_kind = {t.split(":")[0]: row for t, (_, row) in zip(runs["tuner"], runs.iterrows(), strict=True)}
    assert set(by_kind) == {"measured", "posterior"}
    assert by_kind["measured"]["best"] == pytest.approx(picks["measured_best"])
    assert by_kind["posterior"]["best"] == pytest.approx(picks["posterior_pick_measured"])
    assert picks["measured_best"] <= picks["posterior_pick_measured"]  # synthetic is minimised
    assert set(json.loads(by_kind["posterior"]["best_config"])) == {f"x{i}" for i in range(12)}
