"""Build a dataset of random trials with a runner: the raw material for structure learning.

Configurations are drawn independently and uniformly (on each parameter's scale) from the
search space, honouring its constraints, from a fixed seed. Each trial runs into a hidden
staging directory that is renamed to ``trial-NNN`` only when the run succeeded, so an
interrupted generation resumes where it stopped and ``boanon ingest`` never sees half a trial.
Failed configurations are listed in ``failed.jsonl``; the dataset's recipe goes to
``dataset.yaml``.
"""

from __future__ import annotations

import importlib
import json
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from boanon.adapters.files import json_lines
from boanon.errors import ConfigError, LogParseError
from boanon.runners.base import Runner, TrialFailed
from boanon.runners.trial import run_config
from boanon.space import Space
from boanon.yamlfile import load_yaml

FAILED_FILE = "failed.jsonl"
RECIPE_FILE = "dataset.yaml"


def generate_dataset(runner: Runner, space: Space, trials: int, seed: int, out: Path,
                     log: Callable[[str], None] = print) -> list[Path]:
    """Run ``trials`` successful random configurations into ``out/trial-NNN``; returns their dirs.

    Configurations come from one pool drawn up front (three per wanted trial), so a resumed or
    repeated generation with the same seed runs the same configurations in the same order.
    A count below one is a ValueError, before ``out`` is made: an empty dataset is no dataset.
    """
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    out.mkdir(parents=True, exist_ok=True)
    pool = space.sample(3 * trials, np.random.default_rng(seed), sobol=False)
    failed = _failed_trials(out)
    done: list[Path] = []
    for i, config in enumerate(pool):
        if len(done) == trials:
            break
        name = f"trial-{i:03d}"
        final = out / name
        if final.is_dir():
            done.append(final)
            continue
        if name in failed:
            continue
        staging = out / f".{name}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        start = time.monotonic()
        try:
            run_config(runner, config, staging)
        except TrialFailed as exc:
            shutil.rmtree(staging, ignore_errors=True)
            with open(out / FAILED_FILE, "a") as fh:
                fh.write(json.dumps({"trial": name, "config": config, "reason": str(exc)}) + "\n")
            log(f"{name}: FAILED ({exc})")
            continue
        staging.rename(final)
        done.append(final)
        log(f"{name}: ok in {time.monotonic() - start:.1f} s ({len(done)}/{trials})")
    if len(done) < trials:
        raise RuntimeError(f"only {len(done)} of {trials} trials succeeded; see {out / FAILED_FILE}")
    return done


def _failed_trials(out: Path) -> set[str]:
    path = out / FAILED_FILE
    if not path.is_file():
        return set()
    names = set()
    for lineno, entry in json_lines(path):  # a line cut by a killed run names the file and line
        if not isinstance(entry.get("trial"), str):
            raise LogParseError(path, "a failed-trial entry needs a string 'trial'", lineno)
        names.add(entry["trial"])
    return names


def write_recipe(out: Path, runner_name: str, options: Mapping[str, Any], space: Mapping[str, Any],
                 constraints: Sequence[str], trials: int, seed: int) -> None:
    """Record how the dataset was made, in the tuning YAML's vocabulary. A folder holding
    another recipe, or files and no recipe, is refused (:func:`check_resumable`)."""
    recipe = {"space": dict(space), "constraints": list(constraints),
              "runner": {"name": runner_name, "options": dict(options)}, "trials": trials, "seed": seed}
    check_resumable(out, recipe)
    out.mkdir(parents=True, exist_ok=True)
    (out / RECIPE_FILE).write_text(yaml.safe_dump(recipe, sort_keys=False))


def check_resumable(out: Path, recipe: Mapping[str, Any]) -> None:
    """Refuse to add trials to ``out`` unless it is new, empty, or a dataset of this recipe (the
    trial count aside: a resume may want more): another runner option, space or seed added
    trials of another system to the dataset, and overwrote the recipe that said how the first
    ones were made; a folder of other files got trial folders among them."""
    path = out / RECIPE_FILE
    if not path.is_file():
        if out.is_dir() and any(out.iterdir()):
            raise ConfigError(out, "--out", f"holds files but no {RECIPE_FILE}: not a dataset "
                              "boanon generate made; name a new or empty directory")
        return
    old = load_yaml(path)
    if not isinstance(old, dict):
        raise ConfigError(path, "file", "expected the mapping boanon generate writes")
    differ = [k for k in recipe if k != "trials" and _text(old.get(k)) != _text(recipe[k])]
    if differ:
        raise ConfigError(path, ", ".join(differ), "differs from what this command would run: the "
                          "dataset here was made another way, and a resume runs its recipe; pass "
                          "the same options, or name another --out")


def _text(value: Any) -> str:
    """``value`` as YAML text: a recipe read back compares with one about to be written."""
    return yaml.safe_dump(value, sort_keys=True)


def target_space(runner_cls: type[Runner]) -> tuple[dict[str, Any], list[str]]:
    """The search space and constraints a built-in target ships next to its runner.

    By convention the runner's module defines ``default_space()`` and ``default_constraints()``.
    """
    module = importlib.import_module(runner_cls.__module__)
    if not hasattr(module, "default_space"):
        raise ConfigError(runner_cls.__module__, "default_space",
                          f"runner {runner_cls.name!r} ships no search space; pass --space FILE.yaml")
    constraints = getattr(module, "default_constraints", list)
    return module.default_space(), list(constraints())
