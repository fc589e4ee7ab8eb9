"""Several objectives, output constraints and warm starts through the real loop (config, Tuner, CLI)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from boanon.acquisition import SearchSettings
from boanon.cli import main
from boanon.config import parse_config
from boanon.errors import ConfigError
from boanon.multiobjective import PARETO, Scalarization
from boanon.objectives import Objective
from boanon.store import Store
from boanon.synthetic import SyntheticSystem
from boanon.table import read_table
from boanon.tuner import Tuner

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "synthetic-multiobjective.yaml"
FAST = {"settings": SearchSettings(n_sobol=64, n_local=16, local_rounds=1, top=4, group_rounds=0,
                                   screen_samples=16, final_samples=64, n_final=4)}


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # examples.* callables are imported from the current directory


def _example(**changes):
    data = yaml.safe_load(EXAMPLE.read_text())
    data.update(changes)
    return data


def test_config_reads_outputs_reference_point_and_scalarisation():
    config = parse_config(_example(ref_point={"cost2": 12.0, "cost": 40.0},
                                   scalarization={"kind": "product", "weights": [1, 2]}), "mo.yaml")
    assert config.outputs[0].name == "g0_load" and config.outputs[0].max == 1.5
    assert config.ref_point == [40.0, 12.0]
    assert config.propose_options() == {"ref_point": [40.0, 12.0],
                                        "scalarization": Scalarization("product", (1.0, 2.0))}
    for bad, field in (({"outputs": [{"name": "area", "limit": 3}]}, r"outputs\[0\]"),
                       ({"ref_point": [1.0]}, "ref_point"),
                       ({"ref_point": {"cost": 1.0, "latency": 2.0}}, "ref_point"),
                       ({"scalarization": "median"}, "scalarization"),
                       ({"scalarization": {"kind": "weighted_sum", "weights": [1]}}, "scalarization.weights"),
                       ({"warm_start": "no/such/store.db"}, "warm_start"),
                       ({"warm_start": [".", "no/such/store.db"]}, r"warm_start\[1\]"),
                       ({"related_outputs": "g0_load"}, "related_outputs")):
        with pytest.raises(ConfigError, match=f"mo.yaml: {field}"):
            parse_config(_example(**bad), "mo.yaml")


@pytest.mark.parametrize("spec, message", [
    ({"kind": "weighted_summ", "weights": [1, 1]},
     r"mo.yaml: scalarization.kind: unknown kind 'weighted_summ' \(did you mean 'weighted_sum'\?\)"),
    ("chebychev", r"mo.yaml: scalarization: unknown kind 'chebychev' \(did you mean 'chebyshev'\?\)"),
    ({"kind": "weighted_sum", "weights": [1, -1]}, r"mo.yaml: scalarization.weights: .*non-negative"),
])
def test_a_misspelt_scalarization_kind_is_named_with_the_fix(spec: object, message: str):
    # it read "scalarization: scalarisation must be one of (...)": not the field, not the fix
    with pytest.raises(ConfigError, match=message):
        parse_config(_example(scalarization=spec), "mo.yaml")


def test_cli_status_front_export_flag_and_warm_start(tmp_path: Path):
    config = tmp_path / "mo.yaml"
    config.write_text(yaml.safe_dump(_example(n_init=5, strategy="gp")))
    store = tmp_path / "mo.db"
    tune = CliRunner().invoke(main, ["tune", str(config), "--budget", "7", "--store", str(store)])
    assert tune.exit_code == 0, tune.output
    status = CliRunner().invoke(main, ["status", str(store), "--plot", str(tmp_path / "front.png")])
    assert status.exit_code == 0 and "Pareto front:" in status.output and "hypervolume:" in status.output
    assert (tmp_path / "front.png").read_bytes()[:4] == b"\x89PNG"
    out = tmp_path / "mo.csv"
    assert CliRunner().invoke(main, ["export", str(store), "-o", str(out)]).exit_code == 0
    header = out.read_text().splitlines()[0].split(",")
    assert header[:2] == ["trial", PARETO]
    plain = tmp_path / "plain.csv"
    assert CliRunner().invoke(main, ["export", str(store), "-o", str(plain), "--no-pareto"]).exit_code == 0
    read_table(str(plain))  # without the flag the export is the tidy table again

    shifted = tmp_path / "shifted.yaml"
    runner = {"callable": "examples.synthetic_multiobjective:evaluate",
              "options": {"seed": 0, "target_shift": 0.1}}
    shifted.write_text(yaml.safe_dump(_example(n_init=2, strategy="gp", runner=runner)))
    warm = CliRunner().invoke(main, ["tune", str(shifted), "--budget", "3", "--store",
                                     str(tmp_path / "w.db"), "--warm-start", str(out)])
    assert warm.exit_code == 0, warm.output
    assert "warm start: 7 trials of 'mo'" in warm.output
    # the first proposal after the two initial trials is modelled on 2 + 7 trials, not random
    third = next(ln for ln in warm.output.splitlines() if ln.startswith("t0002 "))
    assert third.endswith("[gp]")
    # several related tasks, from the YAML, jointly with a related output
    shifted.write_text(yaml.safe_dump(_example(n_init=2, strategy="multitask", runner=runner,
                                               warm_start=[str(out), str(plain)],
                                               related_outputs=["g0_load"])))
    several = CliRunner().invoke(main, ["tune", str(shifted), "--budget", "3",
                                        "--store", str(tmp_path / "s.db")])
    assert several.exit_code == 0, several.output
    lines = several.output.splitlines()
    assert "warm start: 7 trials of 'mo'" in lines[0] and "warm start: 7 trials of 'plain'" in lines[1]
    assert next(ln for ln in lines if ln.startswith("t0002 ")).endswith("[multitask-gp]")
    status = CliRunner().invoke(main, ["status", str(tmp_path / "s.db")]).output
    assert f"related:    2 tasks: {out}, {plain}; related outputs: g0_load\n" in status
    one = CliRunner().invoke(main, ["status", str(tmp_path / "w.db")]).output  # was "1 task(s)"
    assert f"related:    1 task: {out}\n" in one, one


# Which acquisition is ahead on a known front (EHVI, a scalarised run, random search) and how much
# a related task's trials help (warm against cold start) are outcomes over many seeds, measured by
# ``python -m benchmarks.multiobjective`` (benchmarks/README.md), not decided here by one seeded
# race; the mechanisms are tested in test_ehvi.py and test_multitask.py.


def test_a_product_objective_as_a_deterministic_node_of_the_graph():
    """EDP-style scalarisation inside the DAG: ``prod = cost * cost2`` is a function node, so its
    samples are exactly the product of the two objectives' joint samples, and it can be tuned as
    the single objective of a run."""
    from boanon.acquisition import propose
    from boanon.graph import Edge
    from boanon.models import DAGSurrogate

    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=1, n_duplicates=0, n_objectives=2, seed=0)
    graph = system.true_graph()
    graph.roles.update({"cost": "metric", "cost2": "metric", "prod": "objective"})
    graph.edges += [Edge("cost", "prod"), Edge("cost2", "prod")]
    graph.node_models["prod"] = {"function": "cost * cost2"}
    table = system.sample_table(12, seed=1).rename(columns={"objective:cost": "metric:cost",
                                                             "objective:cost2": "metric:cost2"})
    table["objective:prod"] = table["metric:cost"] * table["metric:cost2"]
    objective = [Objective("prod")]
    draws = DAGSurrogate(system.space, graph, objective).fit(table).sample(
        system.space.sample(5, np.random.default_rng(0)), 32, np.random.default_rng(1))
    assert np.allclose(draws["prod"], draws["cost"] * draws["cost2"])
    proposal = propose(system.space, table, objective, graph=graph, rng=np.random.default_rng(2),
                       settings=FAST["settings"])
    assert proposal.surrogate in ("structured", "gp") and set(proposal.config) == set(system.space.names)


def test_a_trial_stopped_early_is_never_on_the_front_nor_the_best(tmp_path):
    """Its objectives are what it measured before it was cut short: not a finished result."""

    from boanon.space import Space
    from boanon.table import TrialRecord

    path = tmp_path / "run.db"
    space = Space.from_dict({"x": {"type": "float", "low": 0.0, "high": 5.0, "default": 1.0}})
    store = Tuner(space, [Objective("a"), Objective("b")], store=path).store
    for values, stopped in (((1.0, 3.0), False), ((3.0, 1.0), False), ((0.1, 0.1), True)):
        t = store.start_trial({"x": values[0]})
        store.finish_trial(t.id, TrialRecord(t.name, {"x": values[0]}, {},
                                             dict(zip("ab", values, strict=True))), stopped=stopped)
    store.close()
    status = CliRunner().invoke(main, ["status", str(path)])
    assert status.exit_code == 0, status.output
    assert "best a: 1 in t0000" in status.output and "t0002" not in status.output
    out = tmp_path / "run.csv"
    assert CliRunner().invoke(main, ["export", str(path), "-o", str(out)]).exit_code == 0
    exported = pd.read_csv(out)
    assert exported.set_index("trial")[PARETO].to_dict() == {"t0000": True, "t0001": True, "t0002": False}


def test_a_product_scalarisation_runs_past_model_draws_below_zero(tmp_path):
    """ED^2P as the docs write it stopped the example at its 8th trial with a traceback ("a
    product scalarisation needs positive objective values"): the model's draws of the positive
    costs fell below 0, and the check meant for measured values refused them."""
    config = tmp_path / "ed2p.yaml"
    config.write_text(yaml.safe_dump(_example(scalarization={"kind": "product", "weights": [1, 2]})))
    store = tmp_path / "ed2p.db"
    result = CliRunner().invoke(main, ["tune", str(config), "--budget", "9", "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert "t0008" in result.output and "Pareto front:" in result.output


def test_a_product_refuses_the_same_values_per_trial_and_over_arrays():
    """One rule (:meth:`Scalarization.unfoldable`) for the trial the run names and the arrays it
    folds: at or below 0 refused, NaN (not measured) left alone."""
    product, chebyshev = Scalarization("product"), Scalarization("chebyshev")
    values = np.array([[2.0, 0.0], [1.0, np.nan], [-np.inf, 3.0]])
    assert product.unfoldable(values).tolist() == [[False, True], [False, False], [True, False]]
    assert not chebyshev.unfoldable(values).any()
    assert product.measured_problem({"energy": 2.0, "delay": 0.0}) == (
        "objective 'delay' is 0.0: a product scalarisation multiplies positive values (weighted_sum "
        "and chebyshev fold any)")
    assert product.measured_problem({"energy": 2.0, "delay": float("nan")}) is None
    with pytest.raises(ValueError, match=r"an objective is 0.0: a product scalarisation multiplies positive"):
        product(values[:1], np.zeros(2), np.ones(2))


def test_a_product_scalarisation_of_a_maximised_objective_is_refused_when_the_yaml_is_read():
    # the YAML was taken; the run then stopped at its first model proposal with a traceback
    objectives = [{"name": "cost", "direction": "minimize"}, {"name": "cost2", "direction": "maximize"}]
    with pytest.raises(ConfigError, match="mo.yaml: scalarization: a product needs objectives that are all "
                                          "minimised; cost2 is maximised"):
        parse_config(_example(objectives=objectives, scalarization="product"), "mo.yaml")
    assert parse_config(_example(objectives=objectives, scalarization="chebyshev"), "mo.yaml").scalarization


def test_a_misspelt_scalarisation_key_is_named_with_the_fix_as_any_mapping_s():
    # it said "expected one of (...) or a mapping with 'kind' and optional 'weights'", naming
    # neither the key nor the fix, where space, objectives and outputs name both
    with pytest.raises(ConfigError, match=re.escape(
            "mo.yaml: scalarization.wieghts: unknown key (did you mean 'weights'?); expected one of "
            "['kind', 'weights']")):
        parse_config(_example(scalarization={"kind": "product", "wieghts": [1, 2]}), "mo.yaml")


def test_a_ref_point_no_trial_beats_is_warned_once(tmp_path):
    """{cost: 0.1, cost2: 0.1} on a system whose costs stay above 4: every EHVI was 0 and the
    proposals blind, with no word of it."""
    config = tmp_path / "tight.yaml"
    config.write_text(yaml.safe_dump(_example(ref_point={"cost": 0.1, "cost2": 0.1})))
    with pytest.warns(UserWarning) as caught:
        result = CliRunner().invoke(main, ["tune", str(config), "--budget", "9", "--store",
                                           str(tmp_path / "tight.db")])
    assert result.exit_code == 0, result.output
    said = [str(w.message) for w in caught if "ref_point" in str(w.message)]
    assert len(said) == 1, said
    assert said[0].startswith("ref_point (cost=0.1, cost2=0.1) is beaten in every objective by "
                              "no feasible trial")
    loose = tmp_path / "loose.yaml"  # the zigzag example's way: above the worst values
    loose.write_text(yaml.safe_dump(_example(ref_point={"cost": 100, "cost2": 100})))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = CliRunner().invoke(main, ["tune", str(loose), "--budget", "9", "--store",
                                           str(tmp_path / "loose.db")])
    assert result.exit_code == 0, result.output
    assert not [w for w in caught if "ref_point" in str(w.message)]
    with pytest.warns(UserWarning) as caught:  # once per run: a second run in this process is told too
        CliRunner().invoke(main, ["tune", str(config), "--budget", "9", "--store", str(tmp_path / "b.db")])
    assert len([w for w in caught if "ref_point" in str(w.message)]) == 1


def test_a_product_scalarisation_of_a_measured_objective_at_0_stops_the_run_naming_the_trial(
        tmp_path, monkeypatch):
    """A measured cost of 0 under ``scalarization: product`` ended the run in a traceback ("a
    product scalarisation needs positive objective values"), naming neither trial nor objective;
    it stops as a run stops (resumable), saying both, and a resume with chebyshev goes on."""
    (tmp_path / "zero_cost.py").write_text(
        "def evaluate(config):\n"
        "    x = config['x']\n"
        "    return {'cost': 0.0 if x < 0.3 else 1 + x, 'lat': 2 - x}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    data = {"space": {"x": {"type": "float", "low": 0.0, "high": 1.0}}, "objectives": ["cost", "lat"],
            "scalarization": "product", "runner": {"callable": "zero_cost:evaluate"},
            "strategy": "gp", "n_init": 4, "seed": 1}
    config, store = tmp_path / "p.yaml", tmp_path / "p.db"
    config.write_text(yaml.safe_dump(data))
    args = ["tune", str(config), "--budget", "6", "--store", str(store)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output  # no traceback
    zero = next(ln.split()[0] for ln in result.output.splitlines() if " cost=0 " in ln)
    assert (f"run stopped: trial {zero}: objective 'cost' is 0.0: a product scalarisation multiplies "
            "positive values (weighted_sum and chebyshev fold any)") in result.output
    with Store(store, read_only=True) as stopped:  # not "too many failures in a row": none failed
        assert stopped.activity()["state"] == "stopped: the scalarisation cannot fold a trial's objectives"
    config.write_text(yaml.safe_dump({**data, "scalarization": "chebyshev"}))
    resumed = CliRunner().invoke(main, [*args, "--resume"])
    assert resumed.exit_code == 0, resumed.output
