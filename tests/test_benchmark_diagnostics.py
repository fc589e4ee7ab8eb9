"""The offline diagnostics: pool_picks draws each trial once from the pool; rank_evidence counts new bests."""

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
