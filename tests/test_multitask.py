import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import approx_fprime

from boanon.acquisition.selection import cross_validate
from boanon.errors import ConfigError, LogParseError
from boanon.graph import CausalGraph, Edge
from boanon.models.kernels import pairwise_sq
from boanon.multitask import (
    ICMGP,
    TARGET,
    TASK,
    TASK_COLUMN,
    MultiTaskGPSurrogate,
    RelatedTask,
    TaskColumn,
    align_to_space,
    combine_tasks,
    joint_candidate,
    load_related,
    target_trials,
    task_labels,
    task_of,
    with_task,
    with_task_node,
)
from boanon.objectives import Objective
from boanon.space import Space
from boanon.store import Store
from boanon.synthetic import SyntheticSystem
from boanon.table import write_table


def test_icm_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    x, t = rng.random((25, 3)), rng.integers(0, 3, 25)
    y = np.sin(3 * x[:, 0]) + t * x[:, 1]
    gp = ICMGP(3, rank=2)
    gp.fit(x, t, y)  # sets the data; the check below is at a random point, not the optimum
    v = rng.normal(0, 0.5, gp.params_.vector().size)
    sq = pairwise_sq(x)
    numeric = approx_fprime(v, lambda w: gp._objective(w, sq)[0], 1e-6)
    assert np.allclose(gp._objective(v, sq)[1], numeric, rtol=1e-3, atol=1e-3)


def test_icm_learns_task_correlation_and_its_sign():
    rng = np.random.default_rng(1)
    x = rng.random((40, 2))
    f = np.sin(4 * x[:, 0]) + x[:, 1]
    tasks = np.repeat([0, 1, 2], 40)
    y = np.concatenate([f, 2 * f + 1, -f]) + rng.normal(0, 0.02, 120)
    corr = ICMGP(3).fit(np.vstack([x] * 3), tasks, y).task_correlation()
    assert corr[0, 1] > 0.9 and corr[0, 2] < -0.9


def test_icm_borrows_strength_from_a_related_task():
    """Few trials of the target, many of a related task: the joint model predicts the target
    better than a GP on the target's own trials."""
    rng = np.random.default_rng(2)

    def f(x, shift):
        return np.sin(5 * x[:, 0]) + np.cos(3 * x[:, 1]) + shift * x[:, 0]

    xs, xt, xtest = rng.random((40, 2)), rng.random((5, 2)), rng.random((200, 2))
    joint = ICMGP(2).fit(np.vstack([xs, xt]), np.r_[np.zeros(40, int), np.ones(5, int)],
                         np.r_[f(xs, 0.0), f(xt, 0.3)])
    alone = ICMGP(1).fit(xt, np.zeros(5, int), f(xt, 0.3))
    err_joint = np.sqrt(np.mean((joint.predict(xtest, np.ones(200, int))[0] - f(xtest, 0.3)) ** 2))
    err_alone = np.sqrt(np.mean((alone.predict(xtest, np.zeros(200, int))[0] - f(xtest, 0.3)) ** 2))
    assert err_joint < 0.5 * err_alone


def test_multitask_surrogate_samples_outputs_jointly():
    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=1, n_duplicates=0, n_objectives=2, seed=3)
    table = system.sample_table(25, seed=0)
    objectives = [Objective("cost"), Objective("cost2")]
    surrogate = MultiTaskGPSurrogate(system.space, objectives, ["g0_load"]).fit(table)
    configs = system.space.sample(30, np.random.default_rng(1))
    draws = surrogate.sample(configs, 64, np.random.default_rng(2))
    assert set(draws) == {"cost", "cost2", "g0_load"} and draws["cost"].shape == (64, 30)
    truth = np.array([system.evaluate(c, noise=False)["cost"] for c in configs])
    mean = surrogate.predict(configs, np.random.default_rng(0))["cost"][0]
    assert np.corrcoef(mean, truth)[0, 1] > 0.8
    corr = surrogate.output_correlation()
    assert corr.loc["cost", "g0_load"] > 0.3  # g0_load feeds cost through the chain
    # the models' protocol: a refit keeps the hyperparameters, and cross-validation can score it
    refit = surrogate.refit(table.iloc[:20])
    assert refit.model_.params_ is surrogate.model_.params_
    assert len(refit.model_.z_) < len(surrogate.model_.z_)
    scores = cross_validate(surrogate, table, np.random.default_rng(0), n_folds=3)
    assert scores["rank_correlation"] > 0.5


def test_task_indicator_space_graph_and_table():
    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=1, n_duplicates=0, seed=0)
    own, other = system.sample_table(3, seed=1), system.sample_table(4, seed=2)
    both = combine_tasks(own, other, label="old")
    assert task_labels(both) == [TARGET, "old"] and both[TASK_COLUMN].tolist() == [TARGET] * 3 + ["old"] * 4
    assert both["trial"].is_unique
    space = with_task(system.space, ["old"])
    assert {c[TASK] for c in space.sample(16, np.random.default_rng(0))} == {TARGET}
    graph = with_task_node(system.true_graph())
    assert graph.roles[TASK] == "param" and graph.has_edge(TASK, "cost") and not graph.has_edge(TASK, "x0")
    with pytest.raises(ValueError, match="cannot be called"):
        combine_tasks(own, other, label=TARGET)


def test_task_column_adds_the_indicator_everywhere_with_a_related_task_and_nowhere_without():
    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=1, n_duplicates=0, seed=0)
    own, other = system.sample_table(3, seed=1), system.sample_table(4, seed=2)
    graph, pending = system.true_graph(), [{"x0": 0.5}]
    none = TaskColumn()
    assert none.table(own) is own and none.space(system.space) is system.space
    assert none.graph(graph) is graph and none.own(pending) == pending
    tasks = TaskColumn((RelatedTask("old", "old.csv", other),))
    assert task_labels(tasks.table(own)) == [TARGET, "old"] and len(tasks.table(own)) == 7
    assert tasks.space(system.space).params[TASK].choices == (TARGET, "old")
    assert tasks.graph(graph).has_edge(TASK, "cost") and tasks.graph(None) is None
    assert tasks.own(pending) == [{"x0": 0.5, TASK: TARGET}] and pending == [{"x0": 0.5}]


def test_several_related_tasks_keep_their_own_labels():
    from boanon.tuner import Tuner

    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=1, n_duplicates=0, seed=0)
    own, a, b = (system.sample_table(n, seed=n) for n in (3, 4, 5))
    tasks = TaskColumn((RelatedTask("a", "a.csv", a), RelatedTask("b", "b.csv", b)))
    table = tasks.table(own)
    assert list(task_of(table)) == [TARGET] * 3 + ["a"] * 4 + ["b"] * 5  # b's stacking kept a's label
    assert len(target_trials(table)) == 3 and task_labels(table) == [TARGET, "a", "b"]
    assert tasks.space(system.space).params[TASK].choices == (TARGET, "a", "b")
    with pytest.raises(ConfigError, match="b.csv: warm_start: is called 'a' like a.csv"):
        Tuner(system.space, ["cost"], warm_start=[RelatedTask("a", "a.csv", a), RelatedTask("a", "b.csv", b)])
    with pytest.raises(ConfigError, match="target.csv: warm_start: is called 'target' like the run's own"):
        Tuner(system.space, ["cost"], warm_start=[RelatedTask(TARGET, "target.csv", a)])


def test_warm_start_from_a_csv_table_aligns_to_the_new_space(tmp_path):
    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=1, n_duplicates=0, seed=0)
    table = system.sample_table(6, seed=0).drop(columns=["param:x3"])
    table["param:retired"] = 1.0          # a parameter the new space no longer has
    table.loc[2, "param:x0"] = 7.0       # outside the new space
    write_table(table, tmp_path / "old.csv")
    related = align_to_space(load_related(tmp_path / "old.csv"), system.space)
    assert related.label == "old" and len(related.table) == 5 and len(related.dropped) == 1
    assert "t0002" in related.dropped[0] and "x0" in related.dropped[0]
    assert (related.table["param:x3"] == 0.5).all() and "param:retired" not in related.table
    with pytest.raises(ConfigError, match=r"missing\.db: warm_start: no such store, dataset directory or "
                                          r"table$"):  # an absolute path: no note on where it is read from
        load_related(tmp_path / "missing.db")


def test_a_missing_relative_warm_start_says_it_is_read_from_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=re.escape("old.db: warm_start: no such store, dataset directory or "
                                                    f"table (relative to the current directory {tmp_path})")):
        load_related("old.db")


def test_warm_start_from_an_unrelated_task_is_refused(tmp_path):
    from boanon.tuner import Tuner

    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=1, n_duplicates=0, seed=0)
    table = system.sample_table(3, seed=0)
    write_table(table.rename(columns=lambda c: c.replace("param:x", "param:knob")), tmp_path / "other.csv")
    with pytest.raises(ConfigError, match="other.csv: warm_start: its trials share no parameter"):
        align_to_space(load_related(tmp_path / "other.csv"), system.space)
    write_table(table.drop(columns=["objective:cost"]), tmp_path / "blind.csv")
    blind = load_related(tmp_path / "blind.csv")
    assert len(align_to_space(blind, system.space).table) == 3  # the objectives are the Tuner's check
    with pytest.raises(ConfigError, match=r"measured none of the objectives and related outputs \(cost\)"):
        Tuner(system.space, ["cost"], warm_start=blind)


def test_a_warm_start_measuring_no_objective_names_what_it_measured(tmp_path):
    # it named only the run's objectives: "measured none of the objectives and related outputs
    # (cost_s)", and the earlier run's name had to be looked up in its store
    from boanon.tuner import Tuner

    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=1, n_duplicates=0, seed=0)
    write_table(system.sample_table(3, seed=0), tmp_path / "old.csv")
    with pytest.raises(ConfigError, match=r"old.csv: warm_start: its trials measured none of the objectives "
                                          r"and related outputs \(cots\); its objectives: cost "
                                          r"\(did you mean 'cost'\?\)"):
        Tuner(system.space, ["cots"], warm_start=load_related(tmp_path / "old.csv"))


def test_warm_start_from_a_store_brings_its_graph(tmp_path):
    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=1, n_duplicates=0, seed=0)
    graph = CausalGraph(roles={"x0": "param", "cost": "objective"}, edges=[Edge("x0", "cost")])
    with Store(tmp_path / "run.db") as store:
        gid = store.add_graph(graph)
        for config in system.space.sample(4, np.random.default_rng(0)):
            trial = store.start_trial(config, graph_id=gid)
            store.finish_trial(trial.id, system.record(trial.name, config))
        store.fail_trial(store.start_trial(system.space.default()).id, "crashed")
    related = load_related(tmp_path / "run.db", label="rocks-a")
    assert len(related.table) == 4 and related.graph.has_edge("x0", "cost")


def test_warm_start_from_a_dataset_directory(tmp_path):
    import json

    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=1, n_duplicates=0, seed=0)
    for i, config in enumerate(system.space.sample(3, np.random.default_rng(0))):
        rec = system.record(f"trial-{i}", config)
        (tmp_path / f"trial-{i:03d}").mkdir()
        (tmp_path / f"trial-{i:03d}" / "result.json").write_text(json.dumps(
            {"params": rec.params, "metrics": rec.metrics, "objectives": rec.objectives}))
    system.true_graph().save(tmp_path / "graph.json")
    related = load_related(tmp_path)
    assert len(related.table) == 3 and "objective:cost" in related.table
    assert related.graph.has_edge("g0_m2", "cost")
    assert isinstance(related.table, pd.DataFrame)


def test_warm_start_reads_a_table_as_ingest_does_and_fails_as_it_does(tmp_path):
    from boanon.adapters import ingest

    (tmp_path / "plain.csv").write_text("param:x0,objective:cost\n0.2,1.5\n0.4,2.5\n")  # no trial column
    (tmp_path / "runs.jsonl").write_text('{"param:x0": 0.2, "objective:cost": 1.5}\n')
    for name in ("plain.csv", "runs.jsonl"):
        pd.testing.assert_frame_equal(load_related(tmp_path / name).table, ingest(tmp_path / name).table)
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(LogParseError, match=r"empty\.csv:1: empty file: no header line"):
        load_related(tmp_path / "empty.csv")


def test_a_warm_start_lists_the_dataset_trials_it_could_not_read(tmp_path):
    # ingest skips a trial it cannot parse (skip_bad): the warm start kept the rest and said nothing
    for name, x in (("t0", 0.2), ("t1", 0.4)):
        (tmp_path / name).mkdir()
        result = {"params": {"x0": x}, "objectives": {"cost": x}}
        (tmp_path / name / "result.json").write_text(json.dumps(result))
    (tmp_path / "t2").mkdir()
    (tmp_path / "t2" / "result.json").write_text("{not json")
    related = load_related(tmp_path)
    assert related.table["trial"].tolist() == ["t0", "t1"]
    assert len(related.dropped) == 1 and related.dropped[0].startswith(f"{tmp_path}: trial t2: ")


def test_target_trials_leave_the_related_task_out():
    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=1, n_duplicates=0, seed=0)
    own, other = system.sample_table(3, seed=1), system.sample_table(4, seed=2)
    assert target_trials(own) is own
    mine = target_trials(combine_tasks(own, other, label="old"))
    assert mine["trial"].tolist() == own["trial"].tolist()


def test_joint_candidate_only_where_it_can_help_and_stays_cheap():
    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=1, n_duplicates=0, n_objectives=2, seed=0)
    table = system.sample_table(20, seed=0)
    cost, cost2 = Objective("cost"), Objective("cost2")
    assert joint_candidate(system.space, table, [cost]) is None              # one output, one task
    assert isinstance(joint_candidate(system.space, table, [cost], ["g0_load"]), MultiTaskGPSurrogate)
    assert joint_candidate(system.space, combine_tasks(table, table), [cost]) is not None  # a related task
    assert joint_candidate(system.space, system.sample_table(200, seed=1), [cost, cost2]) is None  # too big


def test_a_related_tasks_other_results_are_metrics_in_its_table_and_graph(tmp_path):
    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=1, n_duplicates=0, seed=0)
    table = system.sample_table(6, seed=0)
    table["objective:area"] = 1.0 + table["param:x0"]
    write_table(table, tmp_path / "old.csv")
    graph = system.true_graph()
    graph.roles["area"] = "objective"
    related = RelatedTask("old", "old.csv", load_related(tmp_path / "old.csv").table, graph)
    aligned = align_to_space(related, system.space, ["cost"])
    assert "metric:area" in aligned.table and "objective:area" not in aligned.table
    assert aligned.graph.roles["area"] == "metric" and aligned.graph.roles["cost"] == "objective"
    assert graph.roles["area"] == "objective"  # the task's own graph is left as it was


def test_parallel_workers_ask_past_the_initial_design_before_any_trial_of_the_run_ends():
    # Four workers, three initial trials: the fourth ask comes while those three still run, so
    # only the related task has results. There is no incumbent of the run's own to improve on
    # yet: the proposal is random, and says why (it used to crash in the acquisition).
    from boanon.tuner import Tuner

    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=1, n_duplicates=0, n_objectives=2, seed=0)
    related = RelatedTask("old", "old.csv", system.sample_table(12, seed=1), system.true_graph())
    for objectives in (["cost"], ["cost", "cost2"]):
        tuner = Tuner(system.space, objectives, warm_start=related, seed=0)
        asked = [tuner.ask() for _ in range(tuner.n_init + 1)]
        assert [t.surrogate for t in asked] == ["init"] * tuner.n_init + ["random"]
        assert "only a related task's" in asked[-1].reason
        for trial in asked:
            tuner.tell(trial.id, system.evaluate(trial.config))
        assert tuner.ask().surrogate not in ("init", "random")


def test_multitask_strategy_models_related_outputs_on_every_related_task():
    # Two related workloads, one of which logged only a related output (no objective): the
    # multitask strategy's coregionalised GP learns the objective and the related output on the
    # run's and both tasks' trials; without the related output that task would be refused.
    from boanon.acquisition.proposers import make_proposer
    from boanon.tuner import Tuner

    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=1, n_duplicates=0, seed=0)
    full = RelatedTask("full", "full.csv", system.sample_table(10, seed=1))
    blind = RelatedTask("blind", "blind.csv", system.sample_table(8, seed=2).drop(columns=["objective:cost"]))
    with pytest.raises(ConfigError, match="blind.csv: warm_start: its trials measured none"):
        Tuner(system.space, ["cost"], warm_start=[full, blind], strategy="multitask")
    tuner = Tuner(system.space, ["cost"], warm_start=[full, blind], strategy="multitask",
                  related_outputs=["g0_m2"], seed=0)
    for _ in range(tuner.n_init + 2):
        trial = tuner.ask()
        tuner.tell(trial.id, system.evaluate(trial.config))
    assert trial.surrogate == "multitask-gp" and trial.info["outputs"] == ["cost", "g0_m2"]
    assert tuner.study().warm_start == ["full.csv", "blind.csv"]
    table = TaskColumn(tuner.related).table(tuner.table())
    rng = np.random.default_rng(0)
    (joint,), _ = make_proposer("multitask").candidates(tuner.space, table, tuner.objectives, None, [], rng,
                                                   ["g0_m2", "not_logged"])
    joint.fit(table)
    assert joint.outputs == ["cost", "g0_m2"] and joint.describe()["workloads"] == [TARGET, "blind", "full"]
    # without related outputs, a graph names the objective's mediators
    (joint,), _ = make_proposer("multitask").candidates(tuner.space, table, tuner.objectives,
                                                        system.true_graph(), [], rng)
    assert joint.outputs == ["cost", "g0_m2", "g1_m2"]


def test_a_parameter_column_no_trial_filled_is_taken_at_the_default():
    """Only a parameter some trials logged makes a trial without it unknown; a column empty in
    every row (a table handed in from Python) is a parameter the related run did not log."""
    table = pd.DataFrame({"trial": ["t0", "t1"], "param:x": [1.0, 2.0], "param:y": [np.nan, np.nan],
                          "objective:cost": [3.0, 4.0]})
    space = Space.from_dict({"x": {"type": "float", "low": 0, "high": 5},
                             "y": {"type": "float", "low": 0, "high": 5, "default": 2.5}})
    task = align_to_space(RelatedTask("old", "old.csv", table), space, ["cost"])
    assert task.dropped == [] and list(task.table["param:y"]) == [2.5, 2.5]


def test_a_trial_left_out_for_a_parameter_it_lacks_names_only_options_the_space_has_not():
    """It named a parameter of the space, logged by this trial only, as one "the search space
    has no name for"."""
    table = pd.DataFrame({"trial": ["t0", "t1"], "param:x": [1.0, np.nan], "param:y": [np.nan, 2.0],
                          "param:z": ["odd", np.nan], "objective:cost": [3.0, 4.0]})
    space = Space.from_dict({"x": {"type": "float", "low": 0, "high": 5},
                             "y": {"type": "float", "low": 0, "high": 5}})
    task = align_to_space(RelatedTask("old", "old.csv", table), space, ["cost"])
    assert task.dropped == [
        "old.csv: trial t0: y: not in this trial's logs (the task's other trials have it), so the value "
        "it ran with is unknown; it logged z='odd' instead, which the search space has no name for",
        "old.csv: trial t1: x: not in this trial's logs (the task's other trials have it), so the value "
        "it ran with is unknown"]
    assert task.unmapped == ["z"]
