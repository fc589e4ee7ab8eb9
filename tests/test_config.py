"""The tuning YAML: a valid file loads; every mistake names the file and the field."""

from __future__ import annotations

import datetime
import re
import shutil
from pathlib import Path

import pytest
import yaml

from boanon.config import load_config, parse_config
from boanon.errors import ConfigError
from boanon.runners import Runner, register_runner
from boanon.runners.base import RUNNERS

ROOT = Path(__file__).resolve().parents[1]
BASE = {
    "space": {"x": {"type": "float", "low": 0, "high": 1}, "n": {"type": "int", "low": 1, "high": 4}},
    "objectives": [{"name": "y", "direction": "max"}],
    "runner": {"command": ["prog", "--x={x}", "--n={n}", "--out={trial_dir}"], "options": {"timeout": 5}},
}


def test_example_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    config = load_config("examples/synthetic.yaml")
    assert config.runner == "callable" and config.runner_options["objectives"] == ["cost"]
    assert config.budget == 30 and config.strategy == "structured" and config.n_init == 6
    assert len(config.space) == 12 and config.objectives[0].direction == "minimize"
    runner = config.make_runner()
    assert runner.adapter == "table"


def test_command_runner_takes_the_adapter() -> None:
    config = parse_config({**BASE, "adapter": "table", "constraints": ["x < 0.9"]}, "t.yaml")
    assert config.runner == "command" and config.runner_options["adapter"] == "table"
    assert config.objectives[0].direction == "maximize" and config.budget is None
    assert config.make_runner().timeout == 5.0


@pytest.mark.parametrize("change, field, message", [
    ({"budgett": 3}, "budgett", "unknown key (did you mean 'budget'?); expected one of ['adapter', "),
    ({1: "a", "foo": "b"}, "1", "unknown key; expected one of"),  # it was a TypeError (1 < 'foo')
    ({"space": {"x": {"type": "float", "low": 0, "high": 1, 1: "a", "foo": "b"}}}, "space.x.1",
     "unknown key; expected one of ['choices', "),  # and these three too, in one wording (not "key(s)")
    ({"objectives": [{"name": "y", 1: "a", "foo": "b"}]}, "objectives[0].1",
     "unknown key; expected one of ['direction', 'name', 'unit']"),
    ({"outputs": [{"name": "y", "max": 1, 1: "a", "foo": "b"}]}, "outputs[0].1",
     "unknown key; expected one of ['max', 'min', 'name']"),
    ({"space": {"x": {"type": "float", "low": 0, "high": 1, "defualt": 0.5}}}, "space.x.defualt",
     "unknown key (did you mean 'default'?); expected one of ['choices', "),
    ({"runner": None}, "runner", "expected a mapping"),
    ({"runner": {"name": "rocksdb", "callable": "a:b"}}, "runner", "exactly one of"),
    ({"runner": {"name": "nope"}}, "runner.name", "unknown runner 'nope'"),
    # a name that is no string was a TypeError's traceback (unhashable type: 'list')
    ({"runner": {"name": ["rocksdb"]}}, "runner.name", "expected a runner's name (one of callable, "),
    ({"runner": {"name": {"rocksdb": 1}}}, "runner.name", "got {'rocksdb': 1}"),
    # the runner's mapping and its name in the one wording, with the fix for a typo: its own
    # words ("needs exactly one of ... got ['command', 'optoins']") and no suggestion were a second
    ({"runner": {"command": ["prog"], "optoins": {"timeout": 5}}}, "runner.optoins",
     "unknown key (did you mean 'options'?); expected one of ['callable', 'command', 'name', 'options']"),
    ({"runner": {"name": "rocksbd"}}, "runner.name", "unknown runner 'rocksbd' (did you mean 'rocksdb'?); "
     "available: callable, command, rocksdb"),
    ({"runner": {"callable": "nosuchmodule:f"}}, "runner.callable", "cannot import"),
    ({"runner": {"command": "prog --x={x}"}}, "runner.command", "never one shell string"),
    ({"runner": {"command": ["prog", "--z={z}"]}}, "runner.command", "{z} is not a parameter"),
    ({"runner": {"command": ["prog"], "options": [1]}}, "runner.options", "expected a mapping"),
    ({"strategy": "bayes"}, "strategy", "expected one of"),
    ({"budget": 0}, "budget", "integer >= 1"),
    ({"seed": "x"}, "seed", "integer >= 0"),
    ({"graph": "missing.json"}, "graph", "no such file"),
    ({"adapter": "nope"}, "adapter", "unknown adapter"),
    ({"objectives": []}, "objectives", "at least one"),
    ({"objectives": [{"name": "y", "direction": "up"}]}, "objectives[0]", "direction"),
    ({"space": {"x": {"type": "float", "low": 2, "high": 1}}}, "space.x", "low"),
    ({"constraints": ["x < nope"]}, "constraints", "unknown parameter"),
    # a bound on an output is read as written: it was converted (true -> 1.0) or failed unnamed
    ({"outputs": [{"name": "y", "max": True}]}, "outputs[0].max", "expected a number, got True"),
    ({"outputs": [{"name": "y", "max": "abc"}]}, "outputs[0].max", "expected a number, got 'abc'"),
    ({"outputs": [{"name": "y", "min": float("nan")}]}, "outputs[0].min", "a finite number"),
    # bounds no value meets were found at the first proposal that looked for a feasible trial
    ({"outputs": [{"name": "y", "max": 1}, {"name": "z", "max": 5}, {"name": "y", "min": 2}]}, "outputs[2]",
     "y >= 2.0 (outputs[2]) contradicts y <= 1.0 (outputs[0]): no trial can meet both"),
])
def test_errors_name_the_field(change: dict, field: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config({**BASE, **change}, "t.yaml")
    assert info.value.source == "t.yaml" and info.value.field == field
    assert message in str(info.value)


@pytest.mark.parametrize("runner, message", [
    ({"command": ["prog"], "options": {"timout": 5}}, "runner 'command' has no option 'timout' (did you mean "
     "'timeout'?); its options: command, adapter, timeout"),
    ({"name": "rocksdb", "options": {"timout": 5}}, "runner 'rocksdb' has no option 'timout' (did you mean "
     "'timeout'?)"),
    ({"callable": "examples.synthetic_system:evaluate", "options": {"timout": 5}},
     "examples.synthetic_system:evaluate has no option 'timout'; its options: seed, "),
])
def test_a_misspelt_runner_option_is_named_by_its_full_field(runner: dict, message: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """It was named ``runner``: in a long YAML, the option's path is where the typo is."""
    monkeypatch.chdir(ROOT)  # examples.synthetic_system is imported from the repository root
    config = parse_config({**BASE, "runner": runner}, "t.yaml")
    with pytest.raises(ConfigError) as info:
        config.make_runner()
    assert info.value.field == "runner.options.timout" and f"t.yaml: runner.options.timout: {message}" \
        in str(info.value)


@pytest.mark.parametrize("ref_point, field, message", [
    ([float("nan"), 1], "ref_point[0]", "expected a finite number, got nan"),  # hypervolumes of NaN
    ([True, 1], "ref_point[0]", "expected a number, got True"),                # read as 1.0
    ({"cost": 1, "cost2": "abc"}, "ref_point.cost2", "expected a number, got 'abc'"),
])
def test_a_reference_point_is_read_as_written(ref_point: object, field: str, message: str) -> None:
    data = yaml.safe_load((ROOT / "examples" / "synthetic-multiobjective.yaml").read_text())
    with pytest.raises(ConfigError) as info:
        parse_config({**data, "ref_point": ref_point}, "t.yaml")
    assert info.value.field == field and message in str(info.value)


@pytest.mark.parametrize("timeout, message", [
    (-3, "expected a positive number of seconds, got -3"),
    (0, "expected a positive number of seconds, got 0"),
    ("10m", "expected a number or null, got '10m' (str)"),  # its annotation's type, checked first
    (True, "expected a number or null, got True (bool)"),
])
def test_a_command_timeout_that_is_no_positive_number_is_refused(timeout: object, message: str) -> None:
    """``timeout: -3`` failed every trial at once as "timed out after -3 s"."""
    runner = {"command": ["prog"], "options": {"timeout": timeout}}
    config = parse_config({**BASE, "runner": runner}, "t.yaml")
    with pytest.raises(ConfigError, match=re.escape(f"t.yaml: runner.options.timeout: {message}") + "$"):
        config.make_runner()


def _tuning_file(tmp_path: Path, runner: dict) -> Path:
    """A tuning YAML on disk with ``runner`` as its runner."""
    path = tmp_path / "tune.yaml"
    path.write_text(yaml.safe_dump({**BASE, "runner": runner}))
    return path


@pytest.mark.parametrize("runner, option, reason", [
    ({"name": "zigzag", "options": {"model": "vgg16"}}, "model",
     "expected one of ['resnet18', 'alexnet', 'mobilenetv2']"),
    ({"name": "zigzag", "options": {"model": "alexnet", "layers": [5]}}, "layers",
     "alexnet has Conv layers 0..4; got [5]"),
    ({"name": "rocksdb", "options": {"workload": "readrandon"}}, "workload",
     "unknown 'readrandon' (did you mean 'readrandom'?); expected one of ['mixgraph', 'readrandom', "
     "'readrandomwriterandom', 'readwhilewriting']"),
    ({"name": "rocksdb", "options": {"db_bench": "no-such-db_bench"}}, "db_bench",
     "'no-such-db_bench' not found on PATH (scripts/install-system-deps.sh installs Debian's rocksdb-tools)"),
    ({"name": "sgd", "options": {"network": "resnet"}}, "network",
     "unknown network 'resnet'; known: alexnet, googlenet, speechnet"),
    ({"name": "sgd", "options": {"warmup": 40}}, "warmup", "need 0 <= warmup < iterations, got 40 and 30"),
    ({"name": "command", "options": {"command": ["prog", "{}"]}}, "command",
     "argument '{}': fields must be parameter names, got {}"),
    ({"name": "callable", "options": {"function": "no_such_module:f"}}, "function",
     "'no_such_module:f': cannot import 'no_such_module' (No module named 'no_such_module')"),
    ({"name": "command"}, "command", "missing (required by runner 'command'); given: none"),
    ({"name": "callable", "options": {"functon": "examples.synthetic_system:evaluate"}}, "function",
     "missing (required by runner 'callable') (given as 'functon'?)"),
])
def test_an_invalid_runner_option_is_named_once_by_its_full_field(tmp_path: Path, runner: dict, option: str,
                                                                  reason: str) -> None:
    """A runner's refusal read ``t.yaml: runner: runner.options: model: ...`` (its own field filed
    again under ``runner``), and a missing option was named under ``runner``."""
    path = _tuning_file(tmp_path, runner)
    with pytest.raises(ConfigError) as info:
        load_config(path).make_runner()
    assert str(info.value) == f"{path}: runner.options.{option}: {reason}"
    assert info.value.field == f"runner.options.{option}"


def _runner_file(tmp_path: Path, runner: str) -> Path:
    """A tuning YAML on disk whose runner is written as ``runner`` (YAML text, read as a user's is)."""
    path = tmp_path / "tune.yaml"
    path.write_text(yaml.safe_dump({k: BASE[k] for k in ("space", "objectives")}) + f"runner: {runner}\n")
    return path


@pytest.mark.parametrize("runner, option, reason", [
    ("{name: rocksdb, options: {num: many}}", "num", "expected an integer, got 'many' (str)"),
    ("{name: rocksdb, options: {num: true}}", "num", "expected an integer, got True (bool)"),  # ran as 1 key
    ("{name: rocksdb, options: {reads: 2.500005e5}}", "reads",  # a fraction: int() cut it silently
     "expected an integer or null, got 250000.5 (float)"),
    ("{name: rocksdb, options: {flags: [bloom_bits]}}", "flags",
     "expected a mapping or null, got ['bloom_bits'] (list)"),
    ("{name: rocksdb, options: {reference: 1}}", "reference",
     "expected a string, a mapping or null, got 1 (int)"),
    ("{name: sgd, options: {noise: high}}", "noise", "expected a number, got 'high' (str)"),
    ("{name: sgd, options: {compress: gzip}}", "compress", "expected true or false, got 'gzip' (str)"),
    ("{name: zigzag, options: {lpf_limit: four}}", "lpf_limit", "expected an integer, got 'four' (str)"),
    ("{name: zigzag, options: {layers: 12}}", "layers", "expected a list or null, got 12 (int)"),
    ("{name: zigzag, options: {layers: '1,12'}}", "layers", "expected a list or null, got '1,12' (str)"),
    ("{command: [prog], options: {env: [OMP_NUM_THREADS=1]}}", "env",
     "expected a mapping or null, got ['OMP_NUM_THREADS=1'] (list)"),
    ("{command: [prog], options: {cwd: 7}}", "cwd", "expected a string or null, got 7 (int)"),
    # tuned over ['c', 'o', 's', 't'] (its letters as objectives)
    ("{callable: examples.synthetic_system:evaluate, options: {objectives: cost}}", "objectives",
     "expected a list, got 'cost' (str)"),
])
def test_a_runner_option_of_the_wrong_type_is_named_with_what_was_expected(
        tmp_path: Path, runner: str, option: str, reason: str) -> None:
    """It was Python's bare error under ``runner`` (``'<=' not supported between instances of
    'str' and 'int'``), or none at all (``num: true`` loaded one key, ``objectives: cost`` tuned
    its letters, ``cwd: 7`` failed every trial)."""
    path = _runner_file(tmp_path, runner)
    with pytest.raises(ConfigError) as info:
        load_config(path).make_runner()
    assert str(info.value) == f"{path}: runner.options.{option}: {reason}"


def test_a_whole_number_is_a_number_and_null_leaves_the_default(tmp_path: Path) -> None:
    path = _runner_file(tmp_path, "{name: sgd, options: {noise: 0, pace: 1, noise_seed: null}}")
    runner = load_config(path).make_runner()
    assert (runner.noise, runner.pace, runner.noise_seed) == (0, 1.0, None)


@pytest.mark.parametrize("runner, made", [
    ("{name: sgd, options: {iterations: 3e1, warmup: 5.0, noise_seed: 7.0}}",
     {"iterations": 30, "warmup": 5, "noise_seed": 7}),
    ("{name: zigzag, options: {lpf_limit: 4.0}}", {"lpf_limit": 4}),
    ("{name: rocksdb, options: {num: 1e6, reads: 2.5e5}}", {"num": 1000000, "reads": 250000}),
])
def test_a_whole_number_written_as_a_float_is_an_integer_option(tmp_path: Path, runner: str,
                                                                made: dict) -> None:
    """``num: 1e6`` (YAML's float 1000000.0) was a million keys (the runner's ``int(num)``); the
    annotations' check refused it ("expected an integer, got 1000000.0 (float)")."""
    if "rocksdb" in runner and shutil.which("db_bench") is None:
        pytest.skip("needs db_bench")
    made_runner = load_config(_runner_file(tmp_path, runner)).make_runner()
    assert {k: getattr(made_runner, k) for k in made} == made
    assert all(type(getattr(made_runner, k)) is int for k in made)


class _Dated(Runner):
    """A plug-in runner whose options' annotations are no simple type, or none."""

    name = "test-dated"

    def __init__(self, since: datetime.date | None = None, every=1, ratio: float = 0.5) -> None:
        self.since, self.every, self.ratio = since, every, ratio

    def run(self, config: dict, trial_dir: Path) -> None:
        raise AssertionError("never run")


def test_an_option_annotated_with_no_simple_type_is_the_runners_to_check(tmp_path: Path) -> None:
    register_runner(_Dated)
    try:
        made = load_config(_runner_file(tmp_path, "{name: test-dated, options: {since: 2026-11-30, every: "
                                                  "weekly}}")).make_runner()
        path = _runner_file(tmp_path, "{name: test-dated, options: {ratio: half}}")
        with pytest.raises(ConfigError) as info:
            load_config(path).make_runner()
    finally:
        RUNNERS.entries.pop(_Dated.name, None)
    assert (made.since, made.every) == (datetime.date(2026, 11, 30), "weekly")
    assert str(info.value) == f"{path}: runner.options.ratio: expected a number, got 'half' (str)"


@pytest.mark.parametrize("example", sorted(p.name for p in (ROOT / "examples").glob("*.yaml")
                                           if "runner" in yaml.safe_load(p.read_text())))
def test_every_example_makes_its_runner(example: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each shipped runner's options, as the examples write them, pass its annotations' types."""
    monkeypatch.chdir(ROOT)  # the examples' relative paths and modules
    config = load_config(ROOT / "examples" / example)
    if config.runner == "rocksdb" and shutil.which("db_bench") is None:
        pytest.skip("needs db_bench")
    assert config.make_runner().name == config.runner


class _Unavailable(Runner):
    """A plug-in runner whose constructor fails for a reason that is no option's."""

    name = "test-unavailable"

    def __init__(self) -> None:
        raise ValueError("no /dev/kvm on this machine")

    def run(self, config: dict, trial_dir: Path) -> None:
        raise AssertionError("never made")


def test_a_runners_error_that_is_no_options_is_named_runner(tmp_path: Path) -> None:
    register_runner(_Unavailable)
    try:
        path = _tuning_file(tmp_path, {"name": _Unavailable.name})
        with pytest.raises(ConfigError) as info:
            load_config(path).make_runner()
    finally:
        RUNNERS.entries.pop(_Unavailable.name, None)
    assert str(info.value) == f"{path}: runner: no /dev/kvm on this machine"


@pytest.mark.parametrize("example, field, message", [
    ("rocksdb.yaml", "warm_start", "no such file or directory: datasets/rocksdb-readrandom"),
    ("sgd.yaml", "annotations", "no such file: examples/sgd-annotations.yaml"),
])
def test_a_missing_relative_path_says_it_is_read_from_the_current_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, example: str, field: str, message: str) -> None:
    monkeypatch.chdir(tmp_path)  # the example run from elsewhere: it did not say where it looked
    config = ROOT / "examples" / example
    with pytest.raises(ConfigError, match=re.escape(f"{config}: {field}: {message} (relative to the "
                                                    f"current directory {tmp_path})") + "$"):
        load_config(config)
    with pytest.raises(ConfigError, match=re.escape(f"no such file: {tmp_path / 'missing.json'}") + "$"):
        parse_config({**BASE, "graph": str(tmp_path / "missing.json")}, "t.yaml")


def test_missing_required_key_and_bad_yaml(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump({k: v for k, v in BASE.items() if k != "objectives"}))
    with pytest.raises(ConfigError, match=f"{path}: objectives: missing"):
        load_config(path)
    path.write_text("space: {x: [1, 2\n")
    with pytest.raises(ConfigError, match=rf"{path}: line \d+: invalid YAML"):
        load_config(path)


def test_a_key_written_twice_is_refused_naming_the_file_and_both_lines(tmp_path: Path) -> None:
    """PyYAML keeps the later of two equal keys silently: here the first x, a float, would go."""
    rest = yaml.safe_dump({k: BASE[k] for k in ("objectives", "runner")})
    path = tmp_path / "t.yaml"
    path.write_text("space:\n  x: {type: float, low: 0, high: 1}\n  n: {type: int, low: 1, high: 4}\n"
                    "  x: {type: int, low: 1, high: 4}\n" + rest)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}: line 4: duplicate key 'x' (also on line 2): only one of them " \
                                "would be kept"
    path.write_text("budget: 3\nseed: 1\n'budget': 4\n" + rest)  # keys compare as YAML builds them
    with pytest.raises(ConfigError, match=rf"{path}: line 3: duplicate key 'budget' \(also on line 1\)"):
        load_config(path)


def test_keys_after_a_merge_override_it_as_yaml_means(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("space:\n  x: &unit {type: float, low: 0, high: 1}\n"
                    "  n: {<<: *unit, type: int, high: 4}\n"
                    + yaml.safe_dump({k: BASE[k] for k in ("objectives", "runner")}))
    assert load_config(path).space.to_dict()["n"] == {"type": "int", "low": 0, "high": 4, "log": False}


def test_numbers_in_exponent_notation_are_numbers(tmp_path: Path) -> None:
    """YAML 1.1 (PyYAML) reads 1e-3 and 1.0e6 as text: a learning rate's default was refused
    ("expected a number") while every other reader of the file takes it for 0.001."""
    rest = yaml.safe_dump({k: BASE[k] for k in ("objectives", "runner")})
    path = tmp_path / "t.yaml"
    path.write_text("space:\n  x: {type: float, low: 1e-5, high: 1.0e-1, log: true, default: 1e-3}\n"
                    "  n: {type: int, low: 1, high: 1.0e6, default: 2E+3}\n" + rest)
    space = load_config(path).space
    assert (space.params["x"].low, space.params["x"].default) == (1e-5, 1e-3)
    assert (space.params["n"].high, space.params["n"].default) == (1_000_000, 2000)


def test_annotations_reading_a_categorical_parameter_are_refused_before_the_run(tmp_path: Path) -> None:
    ann = tmp_path / "ann.yaml"  # the first structured fit, after the initial design, was a traceback
    ann.write_text('node_models:\n  y:\n    formula: "a * mode + b * x"\n    free: {a: {}, b: {}}\n')
    space = {**BASE["space"], "mode": {"type": "categorical", "choices": ["a", "b"]}}
    config = parse_config({**BASE, "space": space, "annotations": str(ann)}, "t.yaml")
    with pytest.raises(ConfigError) as info:
        config.load_knowledge()
    assert info.value.source == str(ann) and info.value.field == "node_models.y"
    assert "reads categorical parameter(s) ['mode'] as numbers" in str(info.value)
    ann.write_text('node_models:\n  y:\n    formula: "a * n + b * x"\n    free: {a: {}, b: {}}\n')
    assert set(config.load_knowledge().node_models) == {"y"}  # numbers are fine


def test_a_graph_without_the_runs_objective_is_refused(tmp_path: Path) -> None:
    from boanon.graph import CausalGraph, Edge

    other = tmp_path / "other.json"  # another system's graph: the structured model was a plain GP
    CausalGraph(roles={"cache": "param", "ops": "objective"}, edges=[Edge("cache", "ops")]).save(other)
    config = parse_config({**BASE, "graph": str(other)}, "t.yaml")
    with pytest.raises(ConfigError) as info:
        config.load_graph()
    assert info.value.field == "graph"
    assert str(info.value) == (f"t.yaml: graph: {other} has no node 'y', an objective of the run (its "
                               "objectives: ops): a graph of another system?")
    own = tmp_path / "own.json"
    CausalGraph(roles={"x": "param", "y": "objective"}, edges=[Edge("x", "y")]).save(own)
    assert parse_config({**BASE, "graph": str(own)}, "t.yaml").load_graph().roles["y"] == "objective"
