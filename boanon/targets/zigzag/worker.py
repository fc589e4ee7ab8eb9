"""Run ZigZag once, in its own process: ``python -m boanon.targets.zigzag.worker TRIAL_DIR ...``.

The runner starts this module in a subprocess so that a trial can be timed out and killed, and so
ZigZag's root-logger setup and memory stay out of the caller. ZigZag's own outputs land in
``TRIAL_DIR`` (its ``dump_folder``); a failure ends with one ``zigzag failed: <Type>: <message>``
line on stderr and exit status 3, which the runner turns into the trial's failure reason.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from boanon.targets.zigzag.layout import (
    ACCELERATOR_FILE,
    FAILURE_PREFIX,
    FAILURE_STATUS,
    MAPPING_FILE,
)


def evaluate(trial_dir: Path, model: str, layers: list[int], opt: str, lpf_limit: int) -> None:
    """Run ZigZag on the trial's accelerator and mapping files, dumping into ``trial_dir``."""
    from zigzag.api import get_hardware_performance_zigzag

    from boanon.targets.zigzag.workload import conv_slice

    get_hardware_performance_zigzag(
        conv_slice(model, layers),
        str(trial_dir / ACCELERATOR_FILE),
        str(trial_dir / MAPPING_FILE),
        opt=opt,
        dump_folder=str(trial_dir),
        lpf_limit=lpf_limit,
        loma_show_progress_bar=False,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trial_dir", type=Path)
    parser.add_argument("--model", required=True)
    parser.add_argument("--layers", required=True, help="comma-separated Conv indices")
    parser.add_argument("--opt", default="EDP", choices=["energy", "latency", "EDP"])
    parser.add_argument("--lpf-limit", type=int, default=4)
    args = parser.parse_args(argv)
    # ZigZag calls logging.basicConfig(INFO); configuring the root first keeps only warnings.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        evaluate(args.trial_dir, args.model, [int(x) for x in args.layers.split(",")], args.opt,
                 args.lpf_limit)
    except Exception as exc:  # any ZigZag failure, assertions included, fails this trial
        message = " ".join(str(exc).split())
        print(f"{FAILURE_PREFIX}{type(exc).__name__}: {message}", file=sys.stderr)
        return FAILURE_STATUS
    return 0


if __name__ == "__main__":
    sys.exit(main())
