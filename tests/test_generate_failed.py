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


def test_a_resume_with_another_recipe_is_refused_and_the_dataset_kept(tmp_path):
    out = tmp_path / "ds"  # it added alexnet trials to a googlenet dataset and rewrote its recipe
    first = CliRunner().invoke(main, ["generate", "sgd", "--trials", "2", "--out", str(out)])
    assert first.exit_code == 0, first.output
    recipe = (out / "dataset.yaml").read_text()
    for extra, field in ((["--network", "alexnet"], "runner"), (["--seed", "7"], "seed")):
        result = CliRunner().invoke(main, ["generate", "sgd", "--trials", "3", "--out", str(out), *extra])
        assert result.exit_code == 1
        assert result.output.startswith(f"Error: {out / 'dataset.yaml'}: {field}: differs from what this "
                                         "command would run")
    assert (out / "dataset.yaml").read_text() == recipe
    assert sorted(p.name for p in out.iterdir()) == ["dataset.yaml", "trial-000", "trial-001"]
    more = CliRunner().invoke(main, ["generate", "sgd", "--trials", "3", "--out", str(out)])
    assert more.exit_code == 0 and "trial-002: ok" in more.output  # the same recipe resumes


def test_generate_into_a_folder_of_other_files_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")  # trial folders were added among them
    result = CliRunner().invoke(main, ["generate", "sgd", "--trials", "1", "--out", str(tmp_path)])
    assert result.exit_code == 1
    assert result.output == (f"Error: {tmp_path}: --out: holds files but no dataset.yaml: not a dataset "
                             "boanon generate made; name a new or empty directory\n")
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_generate_refuses_a_misspelt_runner_naming_it_and_the_closest(tmp_path):
    """It said only "unknown runner; available: ...", in words of its own."""
    result = CliRunner().invoke(main, ["generate", "rocksbd", "--trials", "1", "--out", str(tmp_path / "d")])
    assert result.exit_code == 2
    assert "unknown runner 'rocksbd' (did you mean 'rocksdb'?); available: callable, command" in result.output
    assert not (tmp_path / "d").exists()


def test_generate_in_process_gives_the_caller_its_sigterm_handler_back(tmp_path):
    # `boanon generate` set its SIGTERM handler (exit, so that the system is killed) for the rest
    # of the process: a script or test that ran it in-process then exited on a later SIGTERM it
    # handled otherwise (and test_cli_tune's check of the default handler failed after it)
    import signal

    before = signal.getsignal(signal.SIGTERM)
    result = CliRunner().invoke(main, ["generate", "sgd", "--trials", "1", "--out", str(tmp_path / "d")])
    assert result.exit_code == 0, result.output
    assert signal.getsignal(signal.SIGTERM) is before


def test_generate_names_a_runner_option_it_refuses_once(tmp_path):
    out = tmp_path / "ds"  # it read "sgd runner options: network: ...", a YAML's wording with no YAML
    result = CliRunner().invoke(main, ["generate", "sgd", "--trials", "2", "--out", str(out),
                                       "--network", "resnet"])
    assert result.exit_code == 1, result.output
    assert result.output == ("Error: option 'network': unknown network 'resnet'; known: alexnet, googlenet, "
                             "speechnet\n")
    assert not out.exists()
