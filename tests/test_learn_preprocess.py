"""Metric preprocessing: every drop and merge is decided on real columns and recorded with a reason."""

import numpy as np
import pandas as pd
import pytest

from boanon.learners.preprocess import preprocess


def _table(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    comp = rng.choice(["none", "snappy", "zlib"], n)
    load = 3 * x + (comp == "zlib") * 2 + rng.normal(0, 0.3, n)
    return pd.DataFrame({
        "trial": [f"t{i}" for i in range(n)],
        "param:x": x,
        "param:compression": comp,
        "param:fixed": np.full(n, 7),
        "param:flag": rng.integers(0, 2, n).astype(bool),
        "metric:load": load,
        "metric:load_bytes": 4096 * load,            # an exact copy, rescaled
        "metric:load_kb": 4 * load + rng.normal(0, 1e-4, n),  # a near-exact copy
        "metric:zero": np.zeros(n),
        "metric:rare": np.r_[np.zeros(n - 1), 5.0],  # one trial differs
        "metric:noise": rng.normal(0, 1, n),
        "metric:holes": np.where(rng.uniform(size=n) < 0.5, np.nan, 1.0 + x),
        "objective:cost": load + rng.normal(0, 0.3, n),
    })


def test_drops_constant_near_constant_and_missing_with_reasons():
    prep = preprocess(_table())
    dropped = prep.report["dropped"]
    assert dropped["zero"] == "constant"
    assert dropped["rare"].startswith("near-constant")
    assert dropped["holes"].startswith("missing in")
    for name in ("zero", "rare", "holes"):
        assert name not in prep.roles


def test_duplicates_merge_into_one_representative_and_the_group_is_remembered():
    prep = preprocess(_table())
    groups = prep.report["merged"]
    (rep, members), = [(r, m) for r, m in groups.items() if "load" in {r, *m}]
    assert sorted([rep, *members]) == ["load", "load_bytes", "load_kb"]
    assert rep in prep.roles and not set(members) & set(prep.roles)
    assert all(prep.report["dropped"][m].startswith(f"duplicate of {rep}") for m in members)


def test_metric_copying_an_objective_merges_into_the_objective():
    table = _table()
    table["metric:cost_copy"] = 2 * table["objective:cost"]
    prep = preprocess(table)
    assert "cost_copy" in prep.report["merged"]["cost"]
    assert prep.roles["cost"] == "objective"


def test_constant_parameter_is_left_out_unless_knowledge_names_it():
    prep = preprocess(_table())
    assert "fixed" not in prep.roles and not prep.excluded
    assert prep.report["dropped"]["fixed"] == "constant: never varied"
    prep = preprocess(_table(), protected={"fixed"})
    assert prep.excluded == {"fixed": "param"}
    assert "kept in the graph, not learnt from" in prep.report["dropped"]["fixed"]


def test_max_metrics_keeps_the_metrics_most_related_to_the_objectives():
    prep = preprocess(_table(), max_metrics=1)
    metrics = [n for n, r in prep.roles.items() if r == "metric"]
    assert metrics == ["load"]
    assert "not among the 1 metrics" in prep.report["dropped"]["noise"]


def test_protected_metrics_are_never_merged_or_capped_away():
    prep = preprocess(_table(), max_metrics=1, protected={"load_kb", "noise"})
    assert {"load_kb", "noise"} <= set(prep.roles)


def test_encoding_categorical_boolean_and_standardised_columns():
    prep = preprocess(_table())
    assert prep.encodings["compression"] == ["snappy", "zlib"]
    assert prep.basis["compression"].shape[1] == 2
    assert prep.basis["flag"].shape[1] == 1
    assert prep.basis["x"].shape[1] == 2  # linear + quadratic
    for b in prep.basis.values():
        np.testing.assert_allclose(b.mean(axis=0), 0, atol=1e-9)
        np.testing.assert_allclose(b.std(axis=0), 1, atol=1e-9)
    x, names, owner = prep.matrix()
    assert x.shape == (40, len(names))
    assert owner["compression=zlib"] == "compression" and "x" in names


def test_rows_with_a_missing_objective_are_dropped_and_reported():
    table = _table()
    table.loc[3, "objective:cost"] = np.nan
    prep = preprocess(table)
    assert prep.report["rows_dropped"] == ["t3"]
    assert prep.n == 39


def test_a_table_without_objectives_is_an_error():
    with pytest.raises(ValueError, match="no objective"):
        preprocess(_table().drop(columns=["objective:cost"]))
