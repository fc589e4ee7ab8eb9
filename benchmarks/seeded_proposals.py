"""Seeded proposals, configuration by configuration: the check that a refactoring of the tuning
loop changed no proposal (issue 28). Runs each strategy on the synthetic system for a few trials
with fixed seeds and writes every trial's configuration, surrogate and reason as JSON;
``--compare A.json B.json`` says which differ. Run it on two checkouts:

    PYTHONPATH=/path/to/old python benchmarks/seeded_proposals.py -o old.json
    PYTHONPATH=$PWD python benchmarks/seeded_proposals.py -o new.json
    python benchmarks/seeded_proposals.py --compare old.json new.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from boanon.multiobjective import OutputConstraint
from boanon.multitask import load_related
from boanon.runners import make_runner
from boanon.synthetic import SyntheticSystem
from boanon.tuner import Tuner

SEEDS = (0, 1)
TRIALS = 8


def _system(**kw: object) -> SyntheticSystem:
    return SyntheticSystem(n_params=6, n_groups=2, n_distractors=2, n_duplicates=1, seed=1, **kw)


def _run(system: SyntheticSystem, objectives: list[str], seed: int, **options: object) -> list:
    tuner = Tuner(system.space, objectives, seed=seed, n_init=4, relearn_every=2, **options)
    tuner.optimize(make_runner("callable", function=system.evaluate, objectives=objectives), TRIALS)
    return [[t.config, t.surrogate, t.reason] for t in tuner.store.trials()]


def cases(workdir: Path) -> dict[str, list]:
    plain, two = _system(), _system(n_objectives=2)
    related_store = workdir / "related.db"
    shifted = _system(target_shift=0.1)
    with Tuner(shifted.space, ["cost"], strategy="random", seed=9, n_init=12, store=related_store) as earlier:
        earlier.optimize(make_runner("callable", function=shifted.evaluate, objectives=["cost"]), 12)
    related = load_related(related_store, "related")
    bound = [OutputConstraint("g0_load", max=plain.evaluate(plain.space.default(), noise=False)["g0_load"])]
    out: dict[str, list] = {}
    for seed in SEEDS:
        for strategy in ("structured", "gp", "random", "multitask"):
            out[f"{strategy}/seed{seed}"] = _run(plain, ["cost"], seed, strategy=strategy)
        out[f"structured-fixed-graph/seed{seed}"] = _run(plain, ["cost"], seed, strategy="structured",
                                                         graph=plain.true_graph())
        out[f"multitask-related-outputs/seed{seed}"] = _run(plain, ["cost"], seed, strategy="multitask",
                                                            related_outputs=["g0_load", "g1_load"])
        out[f"multitask-warm/seed{seed}"] = _run(plain, ["cost"], seed, strategy="multitask",
                                                 warm_start=related, related_outputs=["g0_load"])
        out[f"structured-warm/seed{seed}"] = _run(plain, ["cost"], seed, strategy="structured",
                                                  warm_start=related)
        out[f"two-objectives/seed{seed}"] = _run(two, ["cost", "cost2"], seed, strategy="structured")
        out[f"constrained/seed{seed}"] = _run(plain, ["cost"], seed, strategy="structured",
                                              output_constraints=bound)
    return out


def compare(a: dict[str, list], b: dict[str, list]) -> int:
    bad = 0
    for name in sorted(set(a) | set(b)):
        ta, tb = a.get(name), b.get(name)
        if ta is None or tb is None:
            print(f"{name}: only in one file")
            bad += 1
            continue
        configs = sum(x[0] == y[0] for x, y in zip(ta, tb, strict=True)) if len(ta) == len(tb) else -1
        rest = sum(x[1:] == y[1:] for x, y in zip(ta, tb, strict=False))
        same = configs == len(ta)
        bad += not same
        print(f"{name}: {configs}/{len(ta)} configurations identical, {rest}/{len(ta)} surrogates+reasons"
              + ("" if same else "  DIFFERENT"))
    print("ALL IDENTICAL" if not bad else f"{bad} case(s) differ")
    return int(bad > 0)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-o", "--output")
    parser.add_argument("--compare", nargs=2)
    args = parser.parse_args()
    if args.compare:
        return compare(*(json.loads(Path(p).read_text()) for p in args.compare))
    with tempfile.TemporaryDirectory() as tmp:
        result = cases(Path(tmp))
    Path(args.output).write_text(json.dumps(result, sort_keys=True, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
