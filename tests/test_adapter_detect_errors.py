"""A plug-in adapter whose ``detect()`` raises is that adapter's problem: it is left out of
auto-detection, named in a warning, and the other adapters are still tried."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from boanon.adapters import Adapter, base, ingest, register_adapter
from boanon.errors import LogParseError
from boanon.table import TrialRecord

ROOT = Path(__file__).resolve().parents[1]


class FragileAdapter(Adapter):
    """Reads its own file in ``detect()`` without checking that it is there."""

    name = "fragile"

    def detect(self, trial_dir: Path) -> bool:
        return (trial_dir / "fragile.txt").read_text().startswith("fragile")

    def parse_trial(self, trial_dir: Path) -> TrialRecord:
        return TrialRecord(trial_dir.name, objectives={"y": 1.0})


@pytest.fixture
def fragile() -> Iterator[None]:
    register_adapter(FragileAdapter)
    yield
    base.ADAPTERS.entries.pop(FragileAdapter.name, None)


def test_a_detect_that_raises_leaves_its_adapter_out_and_the_others_tried(fragile, monkeypatch):
    # it was every ingest's error: "FileNotFoundError: ... trial-000/fragile.txt", whatever the logs
    monkeypatch.chdir(ROOT)
    said = (r"^datasets/rocksdb-readrandom/trial-000: the 'fragile' adapter's detect\(\) failed "
            r"\(FileNotFoundError: .*fragile\.txt'\): auto-detection left it out \(name it with --adapter")
    with pytest.warns(RuntimeWarning, match=said):
        result = ingest("datasets/rocksdb-readrandom")
    assert result.adapter == "rocksdb" and len(result.table) == 40


def test_with_no_adapter_left_the_error_says_none_recognises(fragile, tmp_path):
    (tmp_path / "t0").mkdir()
    (tmp_path / "t0" / "notes.txt").write_text("nothing any adapter reads\n")
    none = r"no adapter recognises these trials; name one with --adapter"
    with pytest.warns(RuntimeWarning, match=r"t0: the 'fragile' adapter's detect\(\) failed"), \
            pytest.raises(LogParseError, match=none):
        ingest(tmp_path)


class CountingAdapter(Adapter):
    """Recognises a folder holding ``counted.txt`` and counts each folder it is asked about."""

    name = "counting"
    asked: list[Path] = []

    def detect(self, trial_dir: Path) -> bool:
        self.asked.append(trial_dir)
        return (trial_dir / "counted.txt").is_file()

    def parse_trial(self, trial_dir: Path) -> TrialRecord:
        return TrialRecord(trial_dir.name, objectives={"y": 1.0})


def test_a_table_file_of_one_trial_is_refused_asking_each_adapter_once(tmp_path):
    # the refusal voted twice on the trial's folder: once to refuse, once to say where to look
    trial = tmp_path / "t0"
    trial.mkdir()
    (trial / "counted.txt").write_text("yes\n")
    (trial / "workers.csv").write_text("x,y\n1,2\n")
    register_adapter(CountingAdapter)
    CountingAdapter.asked = []
    try:
        with pytest.raises(LogParseError, match=r"a file of one trial.*t0 is one trial: the 'counting' "
                                                r"adapter recognises it"):
            ingest(trial / "workers.csv")
    finally:
        base.ADAPTERS.entries.pop(CountingAdapter.name, None)
    assert CountingAdapter.asked == [trial]
