"""Option values the commands read as the command line is parsed: a bad one is the option's
usage error (``Invalid value for '--deadline': ...``), before any work. ``boanon plan
--deadline 0`` profiled the system (real trials) and only then said no plan ends by 0 s, and an
``--early-stopping`` rule's bad setting (``asha:min_resource=0``) was refused after the profile
or the store's reading, in words that named neither the option nor the rule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from boanon.early_stopping import parse_stopper
from boanon.errors import ConfigError
from boanon.planning.instances import parse_duration


class Duration(click.ParamType):
    """A duration greater than zero (``2h``, ``90m``, ``1h30m`` or seconds), as seconds."""

    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):  # a default, or converted already
            return value
        try:
            return parse_duration(value, "command line", "value", positive=True)
        except ConfigError as exc:
            self.fail(exc.reason, param, ctx)


class StopperSpec(click.ParamType):
    """An early-stopping rule as ``RULE[:key=value,...]``, checked by building it
    (:func:`~boanon.early_stopping.parse_stopper`, or ``check`` where a command takes only some
    rules) and kept as the text the run and the plan file take."""

    name = "rule"

    def __init__(self, check: Callable[[str], object] = parse_stopper) -> None:
        self.check = check

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            self.check(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        return value
