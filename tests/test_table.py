import pandas as pd
import pytest

from boanon.table import (
    TrialRecord,
    column,
    columns_of,
    names_of,
    read_table,
    records_to_table,
    split_column,
    validate_table,
    write_table,
)


def test_column_round_trip():
    assert column("metric", "cache:miss") == "metric:cache:miss"
    assert split_column("metric:cache:miss") == ("metric", "cache:miss")
    with pytest.raises(ValueError, match="role"):
        split_column("cache_miss")
    with pytest.raises(ValueError, match="unknown role"):
        column("output", "x")  # type: ignore[arg-type]


def test_records_to_table_orders_columns_by_role_and_keeps_types(tmp_path):
    records = [
        TrialRecord("t1", params={"b": 2, "a": "lz4", "flag": True}, metrics={"m": 1.5},
                    objectives={"y": 3.0}),
        TrialRecord("t2", params={"b": 3, "a": "zlib", "flag": False}, metrics={"m": 2.5, "z": 1.0},
                    objectives={"y": 4.0}),
    ]
    table = records_to_table(records)
    assert list(table.columns) == ["trial", "param:a", "param:b", "param:flag", "metric:m", "metric:z",
                                   "objective:y"]
    assert names_of(table, "param") == ["a", "b", "flag"]
    assert columns_of(table, "objective") == ["objective:y"]
    assert table["param:a"].tolist() == ["lz4", "zlib"]
    assert pd.isna(table.loc[0, "metric:z"])
    path = tmp_path / "t.csv"
    write_table(table, str(path))
    back = read_table(str(path))
    assert back["metric:m"].tolist() == [1.5, 2.5]


def test_validate_table_names_the_bad_column_and_row():
    table = pd.DataFrame({"trial": ["a", "b"], "metric:m": ["1.0", "oops"]})
    with pytest.raises(ValueError, match=r"'metric:m'.*row 1.*'oops'"):
        validate_table(table)
    with pytest.raises(ValueError, match="appears more than once"):
        validate_table(pd.DataFrame({"trial": ["a", "a"], "metric:m": [1.0, 2.0]}))
    with pytest.raises(ValueError, match="missing the 'trial' column"):
        validate_table(pd.DataFrame({"metric:m": [1.0]}))


def test_read_table_keeps_trial_ids_as_text(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("trial,param:x,metric:m\n007,1,\n7,2,0.5\n")
    table = read_table(str(path))
    assert table["trial"].tolist() == ["007", "7"]  # two trials, not a duplicate of trial 7
    assert pd.isna(table.loc[0, "metric:m"]) and table.loc[1, "metric:m"] == 0.5


def test_with_objectives_gives_exactly_the_runs_objectives_that_role():
    from boanon.table import with_objectives

    table = pd.DataFrame({"trial": ["a", "b"], "objective:energy": [2.0, None], "param:x": [1, 2],
                          "metric:tokens": [5.0, 6.0], "objective:edp": [6.0, 7.0],
                          "objective:area": [1.0, 1.5]})
    out = with_objectives(table, ["edp", "tokens"], keep=["area"])
    assert list(out.columns) == ["trial", "param:x", "metric:energy", "objective:edp",
                                 "objective:area", "objective:tokens"]  # a constrained output stays
    assert out["metric:energy"].tolist()[0] == 2.0
    # one quantity told both ways (an adapter's record, then a plain dict) is one column
    mixed = table.assign(**{"metric:energy": [None, 3.0]})
    assert with_objectives(mixed, ["edp"])["metric:energy"].tolist() == [2.0, 3.0]


def test_run_role_is_the_rule_the_table_the_graph_and_a_told_result_share():
    from boanon.graph import CausalGraph
    from boanon.table import run_role

    objectives, keep = ["edp"], ["area"]
    assert run_role("tokens", "metric", ["tokens"]) == "objective"  # a logged metric can be tuned
    assert run_role("energy", "objective", objectives, keep) == "metric"  # another result: a metric
    assert run_role("area", "objective", objectives, keep) == "objective"  # a constrained output stays
    assert run_role("area", "metric", objectives, keep) == "metric"
    assert run_role("edp", "param", objectives) == "param"
    graph = CausalGraph(roles={"x": "param", "energy": "objective", "tokens": "metric",
                               "area": "objective", "edp": "objective"})
    roles = graph.with_objectives(["edp", "tokens"], keep).roles
    assert roles == {"x": "param", "energy": "metric", "tokens": "metric",  # never promoted in a graph
                     "area": "objective", "edp": "objective"}
