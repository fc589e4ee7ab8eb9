"""Runners: configuration in, trial log directory out."""

from boanon.runners.base import Runner, TrialFailed, available_runners, make_runner, register_runner

__all__ = ["Runner", "TrialFailed", "available_runners", "make_runner", "register_runner"]
