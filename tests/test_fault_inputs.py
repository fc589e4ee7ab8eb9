"""Fault injection on inputs: nothing a user or a runner writes makes BoAnon hang or grow
without bound, and every objective value follows one rule whatever the runner.

Real processes (``boanon tune`` / ``boanon ingest``), real files: YAML alias bombs and oversized
configs, sparse multi-GiB logs (``truncate`` costs no disk), a FIFO in a trial directory, and
``result.json`` files holding text, booleans and non-finite numbers. Peak memory is measured
with ``getrusage(RUSAGE_CHILDREN)`` in a fresh wrapper process, so earlier tests do not count.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from boanon.adapters.ingest import ingest
from boanon.errors import LogParseError
from boanon.runners import make_runner, run_trial
from boanon.runners.base import TrialFailed

ROOT = Path(__file__).resolve().parents[1]
BOANON = str(Path(sys.executable).parent / "boanon")
MEASURE = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, "
           "text=True); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
           "print(r.returncode); sys.stdout.write(r.stdout + r.stderr)")


def measured(*args: str, cwd: Path = ROOT, timeout: float = 60) -> tuple[int, int, str]:
    """Run a command; (its peak resident memory in MiB, its exit status, its output). Past
    ``timeout`` it is killed with everything it started, and the test fails."""
    wrapper = subprocess.Popen([sys.executable, "-c", MEASURE, *args], cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = wrapper.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(wrapper.pid, signal.SIGKILL)
        wrapper.communicate()
        raise AssertionError(f"{' '.join(args)[:200]} still running after {timeout} s") from None
    rss_kib, status, output = out.split("\n", 2)
    return int(rss_kib) // 1024, int(status), output


# --- 5. YAML ------------------------------------------------------------------------------------
BOMB = "[&a [lol, lol, lol, lol, lol, lol, lol, lol, lol], " + ", ".join(
    f"&{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]" for i in range(8)) + "]"
"""A flow sequence of nine levels of nine aliases each: 9^9 (387 million) values once expanded,
in a few hundred bytes, given as the value of one field."""
PLACES = {
    "budget": "space: {{x: {{type: float, low: 0, high: 1}}}}\nobjectives: [{{name: cost}}]\n"
              "runner: {{callable: 'examples.synthetic_system:evaluate'}}\nbudget: {bomb}\n",
    "objective name": "space: {{x: {{type: float, low: 0, high: 1}}}}\nobjectives: [{{name: {bomb}}}]\n"
                      "runner: {{callable: 'examples.synthetic_system:evaluate'}}\n",
    "categorical default": "space: {{c: {{type: categorical, choices: [a, b], default: {bomb}}}}}\n"
                           "objectives: [{{name: cost}}]\n"
                           "runner: {{callable: 'examples.synthetic_system:evaluate'}}\n",
}


@pytest.mark.parametrize("place", sorted(PLACES))
def test_a_yaml_alias_bomb_is_refused_at_once_without_printing_it(tmp_path: Path, place: str) -> None:
    config = tmp_path / "bomb.yaml"
    config.write_text(PLACES[place].format(bomb=BOMB))
    rss, status, output = measured(BOANON, "tune", str(config), "--store", str(tmp_path / "r.db"),
                                   timeout=60)
    assert status == 1, output
    assert "expands to more than" in output and str(config) in output
    assert len(output) < 2000 and rss < 500, (len(output), rss)


def test_a_long_written_out_list_is_refused_for_its_length_not_for_aliases(tmp_path: Path) -> None:
    """200 000 choices written out (1.2 MB, under the size cap) pass the value cap with no alias:
    the refusal said it "expands ... through its aliases (&anchor/*alias)", sending the user to
    look for aliases the file does not have."""
    config = tmp_path / "choices.yaml"
    choices = ", ".join(str(i) for i in range(200_000))
    config.write_text(f"space: {{c: {{type: categorical, choices: [{choices}]}}}}\n"
                      "objectives: [{name: cost}]\n"
                      "runner: {callable: 'examples.synthetic_system:evaluate'}\nbudget: 3\n")
    rss, status, output = measured(BOANON, "tune", str(config), "--store", str(tmp_path / "r.db"),
                                   timeout=300)
    assert status == 1 and str(config) in output, output
    reason = output.split(str(config), 1)[-1]
    assert "holds more than 100000 values" in reason and "alias" not in reason, output


def test_an_oversized_config_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    config = tmp_path / "big.yaml"
    head = (ROOT / "examples" / "synthetic.yaml").read_text()
    with config.open("w") as fh:
        fh.write(head)
        line = "# " + "x" * 98 + "\n"
        fh.write(line * (100 * 2**20 // len(line)))  # 100 MB of comments
    rss, status, output = measured(BOANON, "tune", str(config), "--store", str(tmp_path / "r.db"),
                                   timeout=60)
    assert status == 1 and "larger than 4 MiB" in output and str(config) in output, output
    assert rss < 500


def test_an_error_message_never_grows_with_the_value_it_quotes(tmp_path: Path) -> None:
    """A 1 MB objective name (no alias needed) is quoted cut short."""
    config = tmp_path / "long.yaml"
    config.write_text(PLACES["budget"].format(bomb="'" + "9" * 2**20 + "'"))
    _, status, output = measured(BOANON, "tune", str(config), "--store", str(tmp_path / "r.db"))
    assert status == 1 and "budget" in output and "more characters" in output
    assert len(output) < 2000


# --- 6. sparse logs -----------------------------------------------------------------------------
def test_a_runner_writing_gigabytes_to_stderr_costs_the_loop_no_memory(tmp_path: Path) -> None:
    """The program leaves a 2 GiB (sparse) stderr ending in a line that says what went wrong:
    the trial fails with that line and ``tune`` reads only the end of the file."""
    program = ("import os, sys; os.ftruncate(2, 2 ** 31); os.lseek(2, 0, os.SEEK_END); "
               "os.write(2, b'\\nfatal: the disk broke\\n'); sys.exit(3)")
    data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
    data.update(n_init=1, runner={"command": [sys.executable, "-c", program]})
    config = tmp_path / "tune.yaml"
    config.write_text(yaml.safe_dump(data))
    rss, _, output = measured(BOANON, "tune", str(config), "--budget", "1", "--store",
                              str(tmp_path / "r.db"), timeout=120)
    assert "exited with status 3: fatal: the disk broke" in output, output[-2000:]
    assert rss < 500, f"boanon tune peaked at {rss} MiB"


def test_ingest_streams_a_sparse_two_gib_log_and_names_it(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    for name in ("trial-000", "trial-001"):
        shutil.copytree(ROOT / "datasets" / "rocksdb-mixgraph" / name, logs / name)
    with (logs / "trial-001" / "stdout.txt").open("r+b") as fh:
        fh.truncate(2 ** 31)
    rss, status, output = measured(BOANON, "ingest", str(logs), "--adapter", "rocksdb", "-o",
                                   str(tmp_path / "out.csv"), timeout=120)
    assert status != 0 and "trial-001/stdout.txt" in output and "line longer than" in output, output
    assert rss < 500, f"boanon ingest peaked at {rss} MiB"


# --- 7. a FIFO ----------------------------------------------------------------------------------
@pytest.mark.parametrize("skip_bad", [False, True])
def test_a_fifo_in_a_trial_directory_is_refused_not_waited_on(tmp_path: Path, skip_bad: bool) -> None:
    logs = tmp_path / "logs"
    for name in ("trial-000", "trial-001"):
        shutil.copytree(ROOT / "datasets" / "rocksdb-mixgraph" / name, logs / name)
    os.mkfifo(logs / "trial-001" / "OPTIONS-999999")
    _, status, output = measured(BOANON, "ingest", str(logs), "-o", str(tmp_path / "out.csv"),
                                 *(["--skip-bad"] if skip_bad else []))
    assert "trial-001/OPTIONS-999999" in output and "not a regular file (a FIFO)" in output, output
    assert status == (0 if skip_bad else 1), output


# --- 8. one rule for objective values -------------------------------------------------------------
BAD_VALUES = [("12.5", "not a number (text"), (True, "not a number (a boolean"),
              (float("nan"), "not finite"), (float("inf"), "not finite"),
              (-float("inf"), "not finite"), (2.0 ** 70, "out of range")]


def _system(value: object):
    def evaluate(config: dict) -> dict:
        return {"cost": value}
    return evaluate


@pytest.mark.parametrize(("value", "problem"), BAD_VALUES, ids=[repr(v) for v, _ in BAD_VALUES])
def test_every_runner_refuses_the_same_values_saying_what_was_wrong(tmp_path: Path, value: object,
                                                                    problem: str) -> None:
    # the command runner: its program writes result.json; the table adapter reads it
    result = tmp_path / "result.json"
    result.write_text(json.dumps({"objectives": {"cost": value}}))
    command = make_runner("command", command=["cp", str(result), "{trial_dir}/result.json"])
    with pytest.raises(LogParseError) as from_file:
        run_trial(command, {}, tmp_path / "t0000")
    message = str(from_file.value)
    assert "t0000/result.json" in message and "objective 'cost'" in message and problem in message
    assert "missing" not in message
    # the callable runner: the same words for the same value
    function = make_runner("callable", function=_system(value), objectives=["cost"])
    with pytest.raises(TrialFailed) as from_function:
        run_trial(function, {}, tmp_path / "t0001")
    assert "'cost'" in str(from_function.value) and problem in str(from_function.value)


def test_a_non_finite_objective_is_stored_as_failed_saying_not_finite(tmp_path: Path) -> None:
    program = tmp_path / "system.py"
    program.write_text("import json, sys\njson.dump({'objectives': {'cost': float('nan')}}, "
                       "open(sys.argv[1] + '/result.json', 'w'))\n")
    data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
    data.update(n_init=1, runner={"command": [sys.executable, str(program), "{trial_dir}"]})
    config = tmp_path / "tune.yaml"
    config.write_text(yaml.safe_dump(data))
    subprocess.run([BOANON, "tune", str(config), "--budget", "1", "--store", str(tmp_path / "r.db")],
                   cwd=ROOT, capture_output=True, text=True, timeout=120)
    from boanon.store import Store

    with Store(tmp_path / "r.db", read_only=True) as store:
        (trial,) = store.trials()
    assert trial.status == "failed" and "objective 'cost' is not finite" in trial.error
    assert "result.json" in trial.error


def test_ingest_refuses_a_number_written_as_text(tmp_path: Path) -> None:
    trial = tmp_path / "logs" / "t0"
    trial.mkdir(parents=True)
    (trial / "result.json").write_text('{"params": {"x": 1}, "metrics": {"m": "7"}, '
                                       '"objectives": {"y": 1.0}}')
    with pytest.raises(LogParseError, match=r"t0/result.json: metric 'm' is not a number \(text"):
        ingest(tmp_path / "logs")
