"""Round 24 probe: Optuna GP's first n trials (n_startup=n); then the next proposal of Optuna and
of BoAnon's plain GP on the same trials, with BoAnon's acquisition and predictions at both picks.
Env LS_FIXED / LS_LOC / NOISE_RATE / EARLY change BoAnon's GP prior or early phase for the replay.

    PYTHONPATH=. python benchmarks/results/away-r24/probes/first_step.py synthetic-40 5 10
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_variants  # noqa: E402,F401  (registers optuna-gp5)

import boanon.models.gp as gp  # noqa: E402
from benchmarks.step_through import fresh_run  # noqa: E402
from boanon.acquisition.build import build_acquisition  # noqa: E402
from boanon.acquisition.propose import choose_model, propose  # noqa: E402
from boanon.acquisition.proposers import make_proposer  # noqa: E402
from boanon.table import TrialRecord, records_to_table  # noqa: E402


def prior_variant() -> dict:
    """Apply the env's GP prior changes; return propose()'s extra keyword arguments."""
    if "NOISE_RATE" in os.environ:
        gp.NOISE_PRIOR = (1.1, float(os.environ["NOISE_RATE"]))
    if "LS_LOC" in os.environ:
        gp.LENGTHSCALE_PRIOR_LOC = float(os.environ["LS_LOC"])
    if "LS_FIXED" in os.environ:
        gp._lengthscale_prior_mean = lambda d: float(os.environ["LS_FIXED"])
    return {"early_trials": int(os.environ["EARLY"])} if "EARLY" in os.environ else {}


def main(problem_name: str, n: int, n_seeds: int) -> None:
    kw = prior_variant()
    rows = []
    for seed in range(n_seeds):
        problem, tuner = fresh_run(problem_name, "optuna-gp5" if n == 5 else "optuna-gp", seed, n + 1)
        configs, records = [], []
        for _ in range(n + 1):
            config = tuner.ask()
            record = problem.evaluate(config)
            tuner.tell(record)
            configs.append(dict(config))
            records.append(record)
        obj, space = problem.objective, problem.space
        values = obj.to_minimize(np.array([r.objectives[obj.name] for r in records]))
        table = records_to_table([TrialRecord(f"t{i}", dict(c), dict(r.metrics), dict(r.objectives))
                                  for i, (c, r) in enumerate(zip(configs[:n], records[:n], strict=True))])
        ours = propose(space, table, [obj], proposer="gp", rng=np.random.default_rng([seed, n]),
                       design_trials=n, budget=15, **kw)
        model_rng = np.random.default_rng(1)
        candidates, _ = make_proposer("gp").candidates(space, table, [obj], None, [], model_rng, ())
        _, model, *_ = choose_model(candidates, table, model_rng)
        score = build_acquisition(model, table, [obj], [], np.random.default_rng(2), None, None, None)
        ei_ours, ei_theirs = score([ours.config, configs[n]], 512)
        at = [ours.config, configs[n], configs[int(np.argmin(values[:n]))]]
        mean, sd = model.predict(at, n_samples=512, rng=np.random.default_rng(3))[obj.name]
        print(f"   EI boanon-pick {ei_ours:.3g} optuna-pick {ei_theirs:.3g}; mean/sd boanon "
              f"{mean[0]:.3g}/{sd[0]:.3g} optuna {mean[1]:.3g}/{sd[1]:.3g} "
              f"incumbent {mean[2]:.3g}/{sd[2]:.3g}")
        value = float(obj.to_minimize(np.array([problem.evaluate(ours.config).objectives[obj.name]]))[0])
        rows.append((seed, values[:n].min(), values[n], value))
        print(f"seed {seed}: best of {n} {values[:n].min():.4g}  optuna next {values[n]:.4g}  "
              f"boanon-gp next {value:.4g}", flush=True)
    a = np.array(rows)
    print(f"{os.environ.get('VARIANT', 'main')}: median optuna next {np.median(a[:, 2]):.4g}, "
          f"boanon next {np.median(a[:, 3]):.4g}; beats best: optuna {np.sum(a[:, 2] < a[:, 1])}, "
          f"boanon {np.sum(a[:, 3] < a[:, 1])}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
