"""A third-party package adds an adapter through the ``boanon.adapters`` entry point."""

import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from boanon.adapters import Adapter, available_adapters, base, get_adapter, ingest, register_adapter
from boanon.cli import main
from boanon.errors import LogParseError
from boanon.table import TrialRecord

DOCS = Path(__file__).resolve().parents[1] / "docs" / "adapters.md"


@pytest.fixture
def plugin_on_path(tmp_path, monkeypatch):
    (tmp_path / "myplugin.py").write_text(textwrap.dedent('''
        from pathlib import Path
        from boanon.adapters import Adapter
        from boanon.table import TrialRecord

        class KeyValueAdapter(Adapter):
            name = "keyvalue"

            def detect(self, trial_dir: Path) -> bool:
                return (trial_dir / "out.kv").is_file()

            def parse_trial(self, trial_dir: Path) -> TrialRecord:
                pairs = dict(line.split("=") for line in (trial_dir / "out.kv").read_text().split())
                return TrialRecord(trial_dir.name, objectives={k: float(v) for k, v in pairs.items()})
    '''))
    dist = tmp_path / "myplugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: myplugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[boanon.adapters]\nkeyvalue = myplugin:KeyValueAdapter\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    base.ADAPTERS.entries.pop("keyvalue", None)
    sys.modules.pop("myplugin", None)


def test_entry_point_adapter_is_found_and_auto_detected(plugin_on_path, tmp_path):
    assert "keyvalue" in available_adapters()
    trial = tmp_path / "logs" / "t0"
    trial.mkdir(parents=True)
    (trial / "out.kv").write_text("latency=4.5\n")
    result = ingest(tmp_path / "logs")
    assert result.adapter == "keyvalue"
    assert result.table["objective:latency"].tolist() == [4.5]


def test_register_adapter_rejects_unnamed_and_clashing_adapters():
    class Unnamed(Adapter):
        def detect(self, trial_dir):
            return False

        def parse_trial(self, trial_dir):
            raise NotImplementedError

    with pytest.raises(TypeError, match="needs a non-empty class attribute 'name'"):
        register_adapter(Unnamed)

    class Clash(Unnamed):
        name = "table"

    with pytest.raises(ValueError, match="already registered"):
        register_adapter(Clash)
    assert type(get_adapter("table")).__name__ == "TableAdapter"


@pytest.fixture
def register() -> Iterator[Callable[[type[Adapter]], None]]:
    """``register(cls)``: a plug-in adapter, registered through the registry's API for the test."""
    names: list[str] = []

    def add(cls: type[Adapter]) -> None:
        register_adapter(cls)
        names.append(cls.name)
    yield add
    for name in names:
        base.ADAPTERS.entries.pop(name, None)


def _mysystem_trials(root: Path) -> Path:
    """Two trials of the docs' ``mysystem``: t0 reads, t1 has ``q=abc`` on its line 2."""
    for name, q in (("t0", "1"), ("t1", "abc")):
        (root / "ms" / name).mkdir(parents=True)
        (root / "ms" / name / "mysystem.log").write_text(f"latency=4.5\nq={q}\n")
    return root / "ms"


class UnguardedAdapter(Adapter):
    """A plug-in that lets ``float`` raise (as the docs' example once did)."""

    name = "unguarded"

    def detect(self, trial_dir: Path) -> bool:
        return (trial_dir / "mysystem.log").is_file()

    def parse_trial(self, trial_dir: Path) -> TrialRecord:
        pairs = (line.split("=") for line in (trial_dir / "mysystem.log").read_text().splitlines())
        return TrialRecord(trial_dir.name, objectives={k: float(v) for k, v in pairs})


def test_an_exception_a_plugin_adapter_raises_is_its_trials_error(register, tmp_path):
    register(UnguardedAdapter)  # it was the whole ingest's error, naming no file: --skip-bad did not help
    logs = _mysystem_trials(tmp_path)
    with pytest.raises(LogParseError, match=r"ms/t1: the 'unguarded' adapter failed: ValueError: could not "
                                            r"convert string to float: 'abc'$"):
        ingest(logs)
    result = ingest(logs, skip_bad=True)
    assert result.table["trial"].tolist() == ["t0"] and [t for t, _ in result.skipped] == ["t1"]
    res = CliRunner().invoke(main, ["ingest", str(logs), "--skip-bad"])
    assert res.exit_code == 0 and "skipped:    1" in res.output
    assert "t1: " in res.output and "ValueError: could not convert string to float: 'abc'" in res.output
    res = CliRunner().invoke(main, ["ingest", str(logs)])
    assert res.exit_code == 1 and f"{logs / 't1'}: the 'unguarded' adapter failed" in res.output
    assert "--skip-bad" in res.output


def test_the_example_adapter_of_the_docs_names_the_bad_line(register, tmp_path):
    section = DOCS.read_text().split("## Writing an adapter for another system", 1)[1]
    example = section.split("```python\n", 1)[1].split("```", 1)[0]
    scope: dict = {"__name__": "mysystem_boanon.adapter"}
    exec(compile(example, str(DOCS), "exec"), scope)
    register(scope["MySystemAdapter"])
    logs = _mysystem_trials(tmp_path)
    with pytest.raises(LogParseError, match=r"t1/mysystem\.log:2: expected key=<number>, got 'q=abc'"):
        ingest(logs)
    table = ingest(logs, skip_bad=True).table
    assert table["objective:latency"].tolist() == [4.5] and table["metric:q"].tolist() == [1.0]
