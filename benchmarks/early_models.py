"""Which model, fitted to a run's first trials, ranks the configurations near its incumbent?

At 15 evaluations BoTorch's default BO gains on some problems where BoAnon's plain GP does not,
and the two part already in what their models say. This fits both to the *same* early trials and
asks each to rank configurations a local search would consider:

- the trials: a BoTorch run's first ``n`` (the default, 4 Sobol points, then its own proposals;
  one trajectory for both models, so neither is judged on data it chose);
- the candidates: 300 feasible configurations around the incumbent (the best of the ``n``), each
  number moved by a normal step of ``--step`` on the unit scale, booleans and categoricals kept,
  and their true values from the problem;
- the models: BoAnon's plain GP (:class:`~boanon.models.PlainGPSurrogate`), BoTorch's default
  ``SingleTaskGP`` (its priors, standardised outcomes), and the distance to the incumbent (a
  model that only says "near the best is good").

Per model: the Spearman rank correlation of its predicted mean with the truth, and the true value
of the candidate each would run, by lowest mean and by highest analytic expected improvement over
the best observed value, both as the gap to the incumbent in the candidates' standard deviations
(negative: it found a better configuration); and each GP's fitted lengthscales (unit scale),
shortest and median. It measures the model, not the loop's search
(:mod:`benchmarks.moves` shows where proposals go). Needs torch and BoTorch (``bench-gp``).

    python -m benchmarks.early_models synthetic-40 sgd pipeline --seeds 8 --trials 6 9 12
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm, spearmanr

from benchmarks.bo_peers import UnitEncoding, single_task_gp
from benchmarks.problems import Problem
from benchmarks.provenance import provenance
from benchmarks.step_through import fresh_run
from benchmarks.summary import markdown_table
from boanon.models.plain import PlainGPSurrogate
from boanon.space import Space
from boanon.table import TrialRecord, records_to_table

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "early_models"
N_CANDIDATES = 300


def trajectory(problem_name: str, seed: int, n: int) -> tuple[Problem, list[dict], list[TrialRecord]]:
    """The problem and BoTorch's first ``n`` configurations and records for ``seed``."""
    problem, tuner = fresh_run(problem_name, "botorch", seed, n)
    configs, records = [], []
    for _ in range(n):
        config = tuner.ask()
        record = problem.evaluate(config)
        tuner.tell(record)
        configs.append(dict(config))
        records.append(record)
    return problem, configs, records


def candidates(space: Space, incumbent: dict, step: float, rng: np.random.Generator) -> list[dict]:
    """Feasible configurations around ``incumbent``: every number moved, switches kept."""
    out: list[dict] = []
    for _ in range(N_CANDIDATES * 20):
        config = dict(incumbent)
        for name in space.numeric_names:
            p = space.params[name]
            u = p.to_unit(config[name]) + rng.normal(0.0, step)
            config[name] = p.from_unit(float(np.clip(u, 0.0, 1.0)))
        if space.is_feasible(config):
            out.append(config)
            if len(out) == N_CANDIDATES:
                break
    return out


def predictions(problem: Problem, configs: list[dict], records: list[TrialRecord], tests: list[dict],
                incumbent: dict) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each model's mean and standard deviation at ``tests`` in the minimised convention, and its
    fitted lengthscales (none for the distance)."""
    import torch

    space, objective = problem.space, problem.objective
    table = records_to_table([TrialRecord(f"t{i}", dict(c), {}, dict(r.objectives))
                              for i, (c, r) in enumerate(zip(configs, records, strict=True))])
    gp = PlainGPSurrogate(space, [objective]).fit(table)
    mean, sd = gp.predict(tests, np.random.default_rng(0), n_samples=512)[objective.name]
    out = {"boanon-gp": (objective.to_minimize(mean), sd,
                         np.array(gp.models_[objective.name].describe()["lengthscales"]))}

    torch.set_num_threads(1)
    encoding = UnitEncoding(space)
    at = np.array([encoding.encode(c) for c in tests])
    y = -objective.to_minimize(np.array([r.objectives[objective.name] for r in records]))
    model = single_task_gp(np.array([encoding.encode(c) for c in configs]), y)
    with torch.no_grad():
        post = model.posterior(torch.tensor(at, dtype=torch.double))
    out["botorch"] = (-post.mean.numpy().ravel(), post.variance.sqrt().numpy().ravel(),
                      model.covar_module.lengthscale.detach().numpy().ravel())

    out["distance"] = (np.linalg.norm(at - encoding.encode(incumbent), axis=1),
                       np.zeros(len(tests)), np.array([np.nan]))
    return out


def expected_improvement(mean: np.ndarray, sd: np.ndarray, best: float) -> np.ndarray:
    """Analytic EI below ``best`` (a zero spread: the plain improvement)."""
    sd = np.maximum(sd, 1e-12)
    z = (best - mean) / sd
    return (best - mean) * norm.cdf(z) + sd * norm.pdf(z)


def evaluate(problem_name: str, seed: int, sizes: list[int], step: float) -> list[dict]:
    """One row per (trials fitted to, model) for ``seed``: each size's incumbent, candidates and scores."""
    problem, configs, records = trajectory(problem_name, seed, max(sizes))
    objective = problem.objective
    values = objective.to_minimize(np.array([r.objectives[objective.name] for r in records]))
    rng = np.random.default_rng(1000 + seed)
    rows = []
    for n in sizes:
        best_i = int(np.argmin(values[:n]))
        best = float(values[best_i])
        tests = candidates(problem.space, configs[best_i], step, rng)
        truth = objective.to_minimize(np.array([problem.evaluate(c).objectives[objective.name]
                                                for c in tests]))
        spread = float(np.std(truth)) or 1.0
        fitted = predictions(problem, configs[:n], records[:n], tests, configs[best_i])
        for model, (mean, sd, ls) in fitted.items():
            rows.append({"problem": problem_name, "seed": seed, "trials": n, "model": model,
                         "rank_correlation": float(spearmanr(mean, truth).correlation),
                         "mean_pick_gap": (truth[np.argmin(mean)] - best) / spread,
                         "ei_pick_gap": (truth[np.argmax(expected_improvement(mean, sd, best))] - best)
                         / spread,
                         "best_candidate_gap": (truth.min() - best) / spread,
                         "lengthscale_min": float(np.min(ls)), "lengthscale_median": float(np.median(ls))})
    return rows


def summarise(rows: pd.DataFrame) -> pd.DataFrame:
    """Per problem and model: means (and the rank correlation's median) over seeds and sizes; the
    lengthscales' medians."""
    g = rows.groupby(["problem", "model"], sort=False)
    return pd.DataFrame({"cells": g.size(), "rank_corr_mean": g["rank_correlation"].mean(),
                         "rank_corr_median": g["rank_correlation"].median(),
                         "mean_pick_gap": g["mean_pick_gap"].mean(), "ei_pick_gap": g["ei_pick_gap"].mean(),
                         "ei_pick_gap_median": g["ei_pick_gap"].median(),
                         "best_candidate_gap": g["best_candidate_gap"].mean(),
                         "lengthscale_min": g["lengthscale_min"].median(),
                         "lengthscale_median": g["lengthscale_median"].median()}).round(3).reset_index()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("problems", nargs="+")
    parser.add_argument("--seeds", type=int, default=8, help="seeds 0..N-1")
    parser.add_argument("--trials", nargs="+", type=int, default=[6, 9, 12],
                        help="trials the models are fitted to")
    parser.add_argument("--step", type=float, default=0.15, help="the candidates' step on the unit scale")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    rows = pd.DataFrame([row for p in args.problems for seed in range(args.seeds)
                         for row in evaluate(p, seed, args.trials, args.step)])
    args.out.mkdir(parents=True, exist_ok=True)
    rows.to_csv(args.out / "early_models.csv", index=False)
    table = summarise(rows)
    (args.out / "early_models.md").write_text(markdown_table(table) + "\n")
    (args.out / "provenance.json").write_text(json.dumps(
        {**provenance(("boanon", "numpy", "scipy", "torch", "botorch", "gpytorch")),
         "problems": args.problems, "seeds": args.seeds, "trials": args.trials, "step": args.step}, indent=2))
    print(markdown_table(table))


if __name__ == "__main__":
    main()
