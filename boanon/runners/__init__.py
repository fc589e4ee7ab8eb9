"""Runners: configuration in, trial log directory out."""

from boanon.runners import command, function  # noqa: F401  (register the built-in runners)
from boanon.runners.base import Runner, TrialFailed, available_runners, make_runner, register_runner
from boanon.runners.trial import run_config, run_trial

__all__ = ["Runner", "TrialFailed", "available_runners", "make_runner", "register_runner", "run_config",
           "run_trial"]
