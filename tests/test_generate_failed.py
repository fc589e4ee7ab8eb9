"""Dataset generation resumes from failed.jsonl; a damaged one names its file and line; a count
of trials that asks for none is refused."""

import pytest
from click.testing import CliRunner

from boanon.cli import main
from boanon.errors import LogParseError
from boanon.space import Space
from boanon.targets.generate import FAILED_FILE, generate_dataset

SPACE = Space.from_dict({"x": {"type": "int", "low": 1, "high": 10, "default": 5}})


def test_a_cut_failed_line_names_the_file_and_line(tmp_path):
    (tmp_path / FAILED_FILE).write_text('{"trial": "trial-000", "reason": "crash"}\n{"trial": "trial-0')
    with pytest.raises(LogParseError, match=r"failed\.jsonl:2: invalid JSON"):
        generate_dataset(None, SPACE, trials=2, seed=0, out=tmp_path, log=lambda _: None)


def test_an_entry_without_a_trial_name_names_the_file_and_line(tmp_path):
    (tmp_path / FAILED_FILE).write_text('{"trial": "trial-000"}\n\n{"reason": "crash"}\n')
    with pytest.raises(LogParseError, match=r"failed\.jsonl:3: .*'trial'"):
        generate_dataset(None, SPACE, trials=2, seed=0, out=tmp_path, log=lambda _: None)


@pytest.mark.parametrize("trials", ["0", "-2"])
def test_generate_refuses_a_count_of_trials_below_one(tmp_path, trials):
    out = tmp_path / "ds"
    result = CliRunner().invoke(main, ["generate", "sgd", "--trials", trials, "--out", str(out)])
    assert result.exit_code == 2
    assert f"Error: Invalid value for '--trials': {trials} is not in the range x>=1." in result.output
    assert not out.exists()  # no empty dataset left behind


@pytest.mark.parametrize("trials", [0, -2])
def test_generate_dataset_refuses_a_count_of_trials_below_one(tmp_path, trials):
    out = tmp_path / "ds"  # it returned no trials, silently, from an empty dataset directory
    with pytest.raises(ValueError, match=rf"^trials must be >= 1, got {trials}$"):
        generate_dataset(None, SPACE, trials=trials, seed=0, out=out, log=lambda _: None)
    assert not out.exists()


def test_generate_refuses_a_misspelt_runner_option_in_one_line(tmp_path):
    out = tmp_path / "ds"  # it was a traceback
    result = CliRunner().invoke(main, ["generate", "sgd", "--trials", "2", "--out", str(out),
                                       "--netwrok", "alexnet"])
    assert result.exit_code == 1, result.output
    assert result.output == ("Error: runner 'sgd' has no option 'netwrok' (did you mean 'network'?); "
                             "its options: network, iterations, warmup, noise_seed, noise, "
                             "straggler_prob, compress, pace, progress\n")
    assert not out.exists()
