"""Adapters, runners (and their plug-ins) share one registry; reading a config stays light."""

import subprocess
import sys

import pytest

from boanon.errors import InvalidOption
from boanon.registry import Registry
from boanon.runners import Runner, available_runners, make_runner, register_runner

_IMPORTS = """
import sys
import boanon.config
heavy = sorted(m for m in ("boanon.tuner", "boanon.models", "sklearn", "scipy") if m in sys.modules)
import boanon.runners.base as base
targets_before = "boanon.targets" in sys.modules
print(heavy, targets_before, base.available_runners())
"""


def test_config_and_the_runner_base_import_neither_the_tuner_nor_the_targets():
    """``boanon.config`` used to import the tuner (and scipy, scikit-learn) for the strategy names;
    ``runners/base.py`` imported ``boanon.targets``, which imports it back."""
    out = subprocess.run([sys.executable, "-c", _IMPORTS], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] False ['callable', 'command', 'rocksdb', 'sgd', 'zigzag']"


def test_runners_are_registered_like_adapters():
    class Unnamed(Runner):
        adapter = "table"

        def run(self, config, trial_dir):
            return None

    with pytest.raises(TypeError, match="needs a non-empty class attribute 'name'"):
        register_runner(Unnamed)

    class Clash(Unnamed):
        name = "sgd"

    with pytest.raises(ValueError, match="a runner named 'sgd' is already registered"):
        register_runner(Clash)
    assert type(make_runner("sgd")).__name__ == "SgdRunner" and "sgd" in available_runners()
    with pytest.raises(ValueError, match="unknown runner 'nope'; available: callable, command"):
        make_runner("nope")


def test_a_registry_finds_entry_point_plugins(tmp_path, monkeypatch):
    (tmp_path / "myrunners.py").write_text("class Echo:\n    name = 'echo'\n")
    dist = tmp_path / "myrunners-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: myrunners\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[boanon.test-plugins]\necho = myrunners:Echo\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry: Registry[type] = Registry("thing", "boanon.test-plugins")
    assert registry.names() == ["echo"] and registry.get("echo").__name__ == "Echo"
    sys.modules.pop("myrunners", None)


def test_the_strategy_names_a_config_accepts_are_the_tuners():
    from boanon.acquisition.proposers import make_proposer
    from boanon.strategies import strategy_names

    assert {make_proposer(name).name for name in strategy_names()} == set(strategy_names())


def test_learners_are_registered_like_runners_and_a_second_one_under_a_name_is_refused():
    from boanon.learners import available_learners, get_learner, register_learner
    from boanon.learners.base import LEARNERS

    assert {"tiered-pc", "pc", "pgmpy-pc"} <= set(available_learners())
    assert get_learner("tiered-pc").name == "tiered-pc"
    with pytest.raises(ValueError, match="already registered"):
        register_learner("tiered-pc", "another")(lambda prepared, knowledge, *, alpha, seed: None)
    with pytest.raises(ValueError, match="unknown learner 'nope'; available: .*tiered-pc"):
        get_learner("nope")
    assert LEARNERS.group == "boanon.learners"


def test_an_unknown_name_names_the_closest_registered_one() -> None:
    with pytest.raises(ValueError, match=r"unknown runner 'calable' \(did you mean 'callable'\?\);"):
        make_runner("calable")
    from boanon.acquisition.proposers import make_proposer
    with pytest.raises(ValueError, match=r"unknown strategy 'structurd' \(did you mean 'structured'\?\)"):
        make_proposer("structurd")


def test_a_runner_missing_a_required_option_names_it_and_the_misspelling() -> None:
    with pytest.raises(InvalidOption, match=r"^option 'function': missing \(required by runner 'callable'\) "
                       r"\(given as 'functon'\?\)$") as info:
        make_runner("callable", functon=print)
    assert info.value.option == "function"
    with pytest.raises(InvalidOption, match=r"^option 'command': missing \(required by runner 'command'\); "
                       r"given: none$") as info:
        make_runner("command")
    assert info.value.option == "command"
