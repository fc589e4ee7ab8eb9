"""The callable and command runners, run end to end through an adapter."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from boanon.adapters import Adapter, register_adapter
from boanon.adapters.base import ADAPTERS
from boanon.adapters.ingest import ingest
from boanon.cli import main
from boanon.errors import InvalidOption, LogParseError
from boanon.runners import Runner, TrialFailed, group_guard, make_runner, register_runner, run_trial
from boanon.runners.base import RUNNERS
from boanon.runners.command import CommandRunner, GroupGuard, template_fields
from boanon.runners.function import load_callable
from boanon.store import Store
from boanon.synthetic import SyntheticSystem
from boanon.table import TrialRecord

SYSTEM = SyntheticSystem(n_params=4, n_groups=2, seed=5)


def evaluate(config: dict, scale: float = 1.0) -> dict:
    """A module-level callable the tests load by ``module:function``."""
    values = SYSTEM.evaluate(config)
    values["cost"] *= scale
    return values


def crash(config: dict) -> dict:
    raise RuntimeError(f"bad x0={config['x0']}")


def test_callable_goes_through_the_table_adapter(tmp_path: Path) -> None:
    runner = make_runner("callable", function="tests.test_runners:evaluate", objectives=["cost"],
                         scale=2.0)
    config = SYSTEM.space.default()
    record = run_trial(runner, config, tmp_path / "t0000")
    expected = SYSTEM.evaluate(config)
    assert record.trial == "t0000"
    assert record.objectives == {"cost": pytest.approx(2.0 * expected.pop("cost"))}
    assert record.metrics == pytest.approx(expected)
    assert record.params == config
    # The trial directory is an ordinary log directory: `boanon ingest` reads it the same way.
    table = ingest(tmp_path).table
    assert table.loc[0, "objective:cost"] == pytest.approx(record.objectives["cost"])


def test_callable_accepts_nested_values_and_file_paths(tmp_path: Path) -> None:
    module = tmp_path / "system.py"
    module.write_text("def run(config):\n    return {'metrics': {'m': 1}, 'objectives': "
                      "{'y': config['a'] * 2}}\n")
    runner = make_runner("callable", function=f"{module}:run")
    record = run_trial(runner, {"a": 3}, tmp_path / "trials" / "t0000")
    assert record.metrics == {"m": 1.0} and record.objectives == {"y": 6.0}


def test_callable_failures(tmp_path: Path) -> None:
    runner = make_runner("callable", function=crash)
    with pytest.raises(TrialFailed, match="RuntimeError: bad x0=0.5"):
        run_trial(runner, SYSTEM.space.default(), tmp_path / "a")
    assert "Traceback" in (tmp_path / "a" / "traceback.txt").read_text()
    bad = make_runner("callable", function=lambda c: {"y": "fast"}, objectives=["y"])
    with pytest.raises(TrialFailed, match="value for 'y' that is not a number"):
        run_trial(bad, {"x": 1}, tmp_path / "b")
    with pytest.raises(TrialFailed, match="returned list"):
        run_trial(make_runner("callable", function=lambda c: [1]), {"x": 1}, tmp_path / "c")


@pytest.mark.parametrize("spec, message", [
    ("nocolon", "expected 'module:function'"),
    ("boanon.nope:f", "cannot import"),
    ("boanon.space:nothing", "has no attribute"),
    ("boanon.space:__doc__", "not callable"),
])
def test_load_callable_errors(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_callable(spec)


@pytest.mark.parametrize("source, message", [
    ("def evaluate(config):\n    return {'y': 1\n", r"line 2"),
    ("import numpy\nvalue = 1 / 0\n", r"ZeroDivisionError: division by zero \(.*broken.py, line 2\)"),
    ("import not_a_module_anywhere\n", r"ModuleNotFoundError: No module named 'not_a_module_anywhere'"),
    # an error raised inside a library names the user's line that called it, not numpy's
    ("import numpy\n\nnumpy.loadtxt('no-such-file.csv')\n", r"FileNotFoundError: .*broken.py, line 3\)"),
])
def test_a_callable_whose_file_fails_to_import_names_the_file_and_line(tmp_path, monkeypatch, source,
                                                                          message) -> None:
    (tmp_path / "broken.py").write_text(source)
    with pytest.raises(ValueError, match=r"importing .*broken.py failed: .*" + message):
        load_callable(f"{tmp_path / 'broken.py'}:evaluate")
    monkeypatch.chdir(tmp_path)  # the module form, found in the current directory
    with pytest.raises(ValueError, match=r"importing 'broken' failed: .*" + message):
        load_callable("broken:evaluate")


SCRIPT = """
import json, sys, time
args = dict(a.lstrip('-').split('=', 1) for a in sys.argv[1:])
print('running', args['x'])
if float(args['x']) < 0:
    print('negative x', file=sys.stderr); sys.exit(3)
time.sleep(float(args.get('sleep', 0)))
result = {'metrics': {'twice': 2 * float(args['x'])}, 'objectives': {'y': (float(args['x']) - 1) ** 2}}
open(args['out'] + '/result.json', 'w').write(json.dumps(result))
"""


def _command(tmp_path: Path, *extra: str) -> list[str]:
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    return [sys.executable, str(script), "--x={x}", "--out={trial_dir}", *extra]


def test_command_runs_without_a_shell(tmp_path: Path) -> None:
    runner = make_runner("command", command=_command(tmp_path), adapter="table", timeout=30)
    record = run_trial(runner, {"x": 3.0}, tmp_path / "t0000")
    assert record.objectives == {"y": 4.0} and record.metrics == {"twice": 6.0}
    assert (tmp_path / "t0000" / "stdout.txt").read_text() == "running 3.0\n"
    assert json.loads((tmp_path / "t0000" / "config.json").read_text()) == {"x": 3.0}
    # A value full of shell syntax is one literal argument.
    hostile = make_runner("command", command=[sys.executable, "-c", "import sys; print(sys.argv[1])",
                                              "{name}"])
    (tmp_path / "h").mkdir()
    hostile.run({"name": "$(touch pwned); `id` | cat"}, tmp_path / "h")
    assert (tmp_path / "h" / "stdout.txt").read_text() == "$(touch pwned); `id` | cat\n"
    assert not (Path.cwd() / "pwned").exists()


def test_command_failures(tmp_path: Path) -> None:
    runner = make_runner("command", command=_command(tmp_path, "--sleep={sleep}"), timeout=1)
    with pytest.raises(TrialFailed, match="exited with status 3: negative x"):
        run_trial(runner, {"x": -1.0, "sleep": 0}, tmp_path / "exit")
    start = time.monotonic()
    with pytest.raises(TrialFailed, match="timed out after 1 s"):
        run_trial(runner, {"x": 1.0, "sleep": 30}, tmp_path / "slow")
    assert time.monotonic() - start < 10
    with pytest.raises(TrialFailed, match="cannot start"):
        run_trial(make_runner("command", command=["/no/such/program"]), {}, tmp_path / "missing")
    with pytest.raises(TrialFailed) as missing:  # searched on PATH: named
        run_trial(make_runner("command", command=["no-such-program"]), {}, tmp_path / "not-on-path")
    assert "'no-such-program'" in str(missing.value) and "No such file or directory" in str(missing.value)
    with pytest.raises(TrialFailed, match=r"names \{nope\}"):
        run_trial(make_runner("command", command=["true", "{nope}"]), {}, tmp_path / "field")
    # The program ran but left nothing the adapter can read.
    with pytest.raises(LogParseError, match="result.json"):
        run_trial(make_runner("command", command=["true"]), {}, tmp_path / "empty")


def test_the_program_gets_the_default_signal_dispositions_python_ignores(tmp_path: Path) -> None:
    """Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across an exec: the
    program must get the defaults (a pipeline's writer that outlives its reader then dies quietly,
    as in a terminal), whatever starts it (a round-36 guard that exec'd the program lost them)."""
    (tmp_path / "t").mkdir()
    make_runner("command", command=["sh", "-c", "yes | head -n 1; grep SigIgn /proc/self/status"]).run(
        {}, tmp_path / "t")
    assert (tmp_path / "t" / "stderr.txt").read_text() == ""  # not "yes: standard output: Broken pipe"
    ignored = int((tmp_path / "t" / "stdout.txt").read_text().split()[-1], 16)
    assert not ignored & (1 << (signal.SIGPIPE - 1) | 1 << (signal.SIGXFSZ - 1))


def test_the_program_gets_the_environment_configured_and_nothing_more(tmp_path: Path, monkeypatch) -> None:
    """``env: {LANG: C}`` is the program's whole environment: nothing a Python start adds (PEP 538's
    LC_CTYPE=C.UTF-8 under a C locale, which a round-36 guard that exec'd the program passed on)."""
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_CTYPE", raising=False)
    runner = make_runner("command", command=["env", "-0"], env={"LANG": "C"})
    (tmp_path / "t").mkdir()
    runner.run({}, tmp_path / "t")
    given = (tmp_path / "t" / "stdout.txt").read_bytes().split(b"\0")[:-1]
    assert dict(os.fsdecode(e).split("=", 1) for e in given) == runner.env


# A runner holding over a thousand files open (as its hard limit allows): a guard watching a
# descriptor past 1024 with select() would die at once, silently.
CROWDED_RUNNER = """
import os, resource, sys
from pathlib import Path
from boanon.runners.command import CommandRunner
marker, trial = sys.argv[1:]
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard >= 0 else 4096, hard))
held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
CommandRunner(["sh", "-c", "sleep " + marker + " & echo $$ $! > {trial_dir}/pids; wait"]).run({}, Path(trial))
"""


def test_the_sigkill_of_a_runner_holding_many_files_still_takes_the_group(tmp_path: Path,
                                                                           processes_running) -> None:
    """A SIGKILLed runner with over a thousand files open: its program and the worker it started
    die with it (a round-36 guard watching its pipe with select() left the worker running)."""
    import resource

    if 0 <= resource.getrlimit(resource.RLIMIT_NOFILE)[1] < 1200:
        pytest.skip("the hard limit on open files is under 1200")
    assert _workers_left_by_a_sigkilled_runner(CROWDED_RUNNER, "31.4159", tmp_path, processes_running) == []


# A runner descheduled as soon as its program started (Popen returned, nothing else done yet).
LATE_RUNNER = """
import subprocess, sys, time
from pathlib import Path
from boanon.runners.command import CommandRunner

class Late(subprocess.Popen):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if kwargs.get("stdin") is subprocess.DEVNULL:  # the program, not the guard
            time.sleep(120)

subprocess.Popen = Late
marker, trial = sys.argv[1:]
CommandRunner(["sh", "-c", "sleep " + marker + " & echo $$ $! > {trial_dir}/pids; wait"]).run({}, Path(trial))
"""


def test_a_runner_killed_before_it_could_tell_the_guard_still_takes_the_group(tmp_path: Path,
                                                                             processes_running) -> None:
    """The program's group reaches the guard before the program runs: told by the runner once
    Popen returned, a runner killed in between (seen under load) left the program's worker running."""
    assert _workers_left_by_a_sigkilled_runner(LATE_RUNNER, "31.2718", tmp_path, processes_running) == []


def test_a_program_runs_when_its_guard_is_gone() -> None:
    """Its guard killed by hand, a program still runs (unwatched, as the runner's own writes to a
    gone guard already allowed): the program's own word to the guard must not end it by SIGPIPE."""
    guard = GroupGuard().__enter__()
    guard._proc.kill()
    guard._proc.wait()
    program = subprocess.run(["sh", "-c", "echo ran"], capture_output=True, text=True, timeout=30,
                             start_new_session=True, preexec_fn=guard.arming(os.getpid()))
    guard.__exit__(None, None, None)
    assert (program.returncode, program.stdout) == (0, "ran\n")


def _workers_left_by_a_sigkilled_runner(script: str, marker: str, tmp_path: Path,
                                        processes_running: Callable[[str], list[int]]) -> list[int]:
    """Run ``script`` (a runner whose program starts ``sleep marker`` and writes ``pids``), SIGKILL
    it once the program has started its worker, and return the workers still running 5 s later
    (killed here, so that a failure leaves none behind)."""
    trial = tmp_path / "t"
    trial.mkdir()
    runner = subprocess.Popen([sys.executable, "-c", script, marker, str(trial)])
    deadline = time.monotonic() + 30
    while not (trial / "pids").is_file() or not (trial / "pids").read_text().endswith("\n"):
        assert time.monotonic() < deadline and runner.poll() is None, "the program never started"
        time.sleep(0.02)
    runner.kill()
    runner.wait()
    deadline = time.monotonic() + 5
    while (left := processes_running(f"sleep {marker}")) and time.monotonic() < deadline:
        time.sleep(0.02)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


def test_a_trial_that_ended_leaves_no_guard_and_what_its_program_left_alone(tmp_path: Path,
                                                                           processes_running) -> None:
    """The guard that takes a dead runner's program group down exits with the trial and touches
    nothing: a process the program left running runs on, as it did before there was a guard."""
    marker = "27.1828"
    runner = make_runner("command", command=[sys.executable, "-c",
                                             f"import subprocess; subprocess.Popen(['sleep', '{marker}'])"])
    (tmp_path / "t").mkdir()
    runner.run({}, tmp_path / "t")
    left = processes_running(f"sleep {marker}")
    try:
        assert len(left) == 1
        guards = [p for p in processes_running(group_guard.__file__) if _parent(p) == os.getpid()]
        assert guards == []
    finally:
        for pid in left:
            os.kill(pid, signal.SIGKILL)


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return None


def test_command_template_checks() -> None:
    assert template_fields(["prog", "--a={a}", "{trial_dir}/x", "{{literal}}"]) == {"a", "trial_dir"}
    with pytest.raises(ValueError, match="parameter names"):
        template_fields(["--a={0}"])
    with pytest.raises(InvalidOption, match=r"^option 'command': expected a non-empty list of arguments "
                       r"\(no shell string\)$"):
        CommandRunner(command="prog --x={x}")
    with pytest.raises(InvalidOption, match=r"^option 'command': expected a list, got 'prog --x=\{x\}' "
                       r"\(str\)$"):  # its annotation's type, checked before the runner is made
        make_runner("command", command="prog --x={x}")


def test_trial_directory_must_be_empty(tmp_path: Path) -> None:
    (tmp_path / "t0000").mkdir()
    (tmp_path / "t0000" / "old.txt").write_text("left over")
    with pytest.raises(FileExistsError, match="not empty"):
        run_trial(make_runner("callable", function=evaluate), {}, tmp_path / "t0000")


def test_a_stop_answered_to_the_last_report_is_not_an_early_stop(tmp_path):
    """Only the runner knows whether anything was left to cut: the trial then counts as done."""
    from boanon.runners.trial import run_trial_stopping
    from boanon.targets.sgd.runner import default_config

    runner = make_runner("sgd", network="googlenet", iterations=4, warmup=1, noise_seed=1)
    runner.progress = lambda step, value: step < 3  # says stop at the last iteration only
    record, stopped = run_trial_stopping(runner, default_config(), tmp_path / "last")
    assert not stopped and "iteration_time" in record.objectives
    runner.progress = lambda step, value: step < 1  # says stop after the second of four
    record, stopped = run_trial_stopping(runner, default_config(), tmp_path / "early")
    assert stopped and "iteration_time" in record.objectives


class KeyValueRunner(Runner):
    """A plug-in runner as docs/contributing.md describes: it writes only its system's log."""

    name = "test-keyvalue"
    adapter = "test-keyvalue"

    def run(self, config: dict, trial_dir: Path) -> None:
        (trial_dir / "out.kv").write_text(f"cost={(config['x'] - 0.3) ** 2}\n")


class KeyValueAdapter(Adapter):
    """Its log's reader: the log holds the objective, not the configuration."""

    name = "test-keyvalue"

    def detect(self, trial_dir: Path) -> bool:
        return (trial_dir / "out.kv").is_file()

    def parse_trial(self, trial_dir: Path) -> TrialRecord:
        key, value = (trial_dir / "out.kv").read_text().strip().split("=")
        return TrialRecord(trial_dir.name, objectives={key: float(value)})


@pytest.fixture
def keyvalue_plugin() -> Iterator[None]:
    """The plug-in runner and adapter, registered through the registries for the test."""
    register_runner(KeyValueRunner)
    register_adapter(KeyValueAdapter)
    yield
    RUNNERS.entries.pop(KeyValueRunner.name, None)
    ADAPTERS.entries.pop(KeyValueAdapter.name, None)


def test_a_plugin_runners_trials_ingest_again_with_their_parameters(keyvalue_plugin, tmp_path: Path) -> None:
    """config.json was each built-in runner's to write: a plug-in runner's trial folders read
    back with ``boanon ingest`` gave "parameters: 0"."""
    config = tmp_path / "tune.yaml"
    config.write_text("space: {x: {type: float, low: 0, high: 1, default: 0.5}}\n"
                      "objectives: [{name: cost, direction: minimize}]\n"
                      "runner: {name: test-keyvalue}\nn_init: 3\nstrategy: random\n")
    store = tmp_path / "run.db"
    tuned = CliRunner().invoke(main, ["tune", str(config), "--budget", "3", "--store", str(store)])
    assert tuned.exit_code == 0, tuned.output
    read = CliRunner().invoke(main, ["ingest", str(tmp_path / "run.trials")])
    assert read.exit_code == 0 and "parameters: 1\n" in read.output, read.output
    with Store(store, read_only=True) as s:
        ran = {t.name: t.config["x"] for t in s.trials("done")}
    table = ingest(tmp_path / "run.trials").table
    assert len(ran) == 3 and dict(zip(table["trial"], table["param:x"], strict=True)) == ran
