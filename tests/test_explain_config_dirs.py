"""``boanon explain --measure --config``: the YAML named from where the command runs, its own
relative paths from the directory the run was started in (docs/seeing.md), and the current
directory back where it was however the measurement ends."""

from pathlib import Path

import yaml
from click.testing import CliRunner
from test_explain import _project_run

from boanon.cli import main
from boanon.store import Store


def test_a_relative_config_is_found_from_here_and_its_paths_from_the_runs_directory(tmp_path, monkeypatch):
    project = _project_run(tmp_path, monkeypatch)  # now in tmp_path/elsewhere
    result = CliRunner().invoke(main, ["explain", "../project/run.db", "--measure", "--trial", "t0001",
                                       "--config", "../project/tune.yaml", "--trials-dir", "logs"])
    assert result.exit_code == 0, result.output  # system.py and annotations.yaml: the project's
    assert Path.cwd() == tmp_path / "elsewhere"
    with Store(project / "run.db") as store:
        assert [t.status for t in store.trials() if t.surrogate == "ablation"] == ["done", "done"]


def test_the_directory_is_restored_when_the_measurement_is_interrupted(tmp_path, monkeypatch):
    project = _project_run(tmp_path, monkeypatch)
    (project / "stop.py").write_text("def evaluate(config):\n    raise KeyboardInterrupt\n")
    data = yaml.safe_load((project / "tune.yaml").read_text())
    data["runner"] = {"callable": "stop.py:evaluate"}  # found in the run's directory, not here
    Path("stop.yaml").write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(main, ["explain", "../project/run.db", "--measure", "--trial", "t0001",
                                       "--config", "stop.yaml", "--trials-dir", "logs"])
    assert result.exit_code == 130, result.output
    assert Path.cwd() == tmp_path / "elsewhere"
    with Store(project / "run.db") as store:
        assert [t.error for t in store.trials() if t.surrogate == "ablation"] == \
            ["ablation measurement interrupted"]
