"""A third-party package adds an adapter through the ``boanon.adapters`` entry point."""

import sys
import textwrap

import pytest

from boanon.adapters import Adapter, available_adapters, base, get_adapter, ingest, register_adapter


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
