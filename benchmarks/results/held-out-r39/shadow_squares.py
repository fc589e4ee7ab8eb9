"""Round 39's check that the new loss search changes no run it was not meant to change.

Runs ``benchmarks.run`` with the relation search of the checkout on ``PYTHONPATH`` (the code
before the change), and calls the ``_squares_fit`` of ``SHADOW_RELATIONS`` (the changed
``boanon/learners/relations.py``) beside it on every call: the run follows the old result, and
every call whose two results differ is appended to ``SHADOW_LOG`` (JSON lines; the last line of
each process counts the calls). No difference logged means the changed search would have made
the very same run.

    SHADOW_RELATIONS=NEW/boanon/learners/relations.py SHADOW_LOG=diff.jsonl \\
        PYTHONPATH=OLD python benchmarks/results/held-out-r39/shadow_squares.py --problems ... --out DIR
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import sys

import boanon.learners.relations as old

spec = importlib.util.spec_from_file_location("relations_new", os.environ["SHADOW_RELATIONS"])
new = importlib.util.module_from_spec(spec)
sys.modules["relations_new"] = new  # its dataclasses look their module up
spec.loader.exec_module(new)
LOG = os.environ["SHADOW_LOG"]
calls = {"calls": 0, "differ": 0}
old_fit = old._squares_fit


def _described(fit) -> list | None:
    return None if fit is None else [fit.expression, list(fit.inputs)]


def shadow(sub, y, tolerance, root):
    was = old_fit(sub, y, tolerance, root)
    now = new._squares_fit(new._Columns(sub.names, sub.matrix), y, tolerance, root)
    calls["calls"] += 1
    if _described(was) != _described(now):
        calls["differ"] += 1
        with open(LOG, "a") as fh:
            fh.write(json.dumps({"argv": sys.argv[1:], "n": len(y), "old": _described(was),
                                 "new": _described(now)}) + "\n")
    return was


def _count() -> None:
    with open(LOG, "a") as fh:
        fh.write(json.dumps({"argv": sys.argv[1:], **calls}) + "\n")


old._squares_fit = shadow
atexit.register(_count)

from benchmarks.run import main  # noqa: E402  (after the patch)

main(sys.argv[1:])
