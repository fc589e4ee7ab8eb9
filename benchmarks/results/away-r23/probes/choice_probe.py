"""Round 23's scratch replay of one structured run: what decided each model choice.

``pointwise``: at every proposal, the per-trial held-out log density difference between the
graph's model and the plain GP (mean, median, share of trials won, the worst four), which the
proposal's reason reports only as means. ``safety-net``: from trial FIRST on, the forms found for
each node and every candidate model the node safety net scored, with its held-out log density.
It wraps private functions of `boanon` (a probe, not a tool), so it reads the code it runs with:

    PYTHONPATH=. python benchmarks/results/away-r23/probes/choice_probe.py pointwise synthetic-40 0 15
    PYTHONPATH=. LS_RULE=below python benchmarks/results/away-r23/probes/choice_probe.py \
        safety-net fn-ackley 7 15 13

(the second with probes.patch applied to `db6b1b4`).
"""

from __future__ import annotations

import sys

import numpy as np

from benchmarks.step_through import replay
from boanon.acquisition import selection
from boanon.models import dag

LOG: list[str] = []
HELD: dict[str, tuple[dict, np.ndarray]] = {}


def _record_held_out(original):
    def wrapped(surrogate, table, rng, n_folds=5, n_samples=32):
        scores, pointwise = original(surrogate, table, rng, n_folds, n_samples)
        HELD[surrogate.name] = (scores, pointwise)
        return scores, pointwise
    return wrapped


def _record_chain_cv(original):
    def wrapped(self, table, batch, node, model, folds, held, rng):
        out = original(self, table, batch, node, model, folds, held, rng)
        formula = getattr(model, "formula", None)
        LOG.append(f"      {node}: {model.kind} params={len(model.param_parents)} "
                   f"metrics={model.metric_parents} lpd={out[0]:.3f} "
                   f"{str(formula)[:60] if formula is not None else ''}")
        return out
    return wrapped


def _record_forms(original):
    def wrapped(self, table, batch):
        forms = {k: (v.get("form"), round(v.get("heldout_r2", 0), 3))
                 for k, v in self.report_.get("forms", {}).items()}
        LOG.append(f"    forms before the safety net: {forms} (n={len(table)})")
        return original(self, table, batch)
    return wrapped


def _pointwise_line() -> str:
    if "structured" not in HELD or "gp" not in HELD:
        return ""
    d = np.nan_to_num(HELD["structured"][1] - HELD["gp"][1], nan=-1e6, neginf=-1e6)
    rank = f"{HELD['structured'][0]['rank_correlation']:.2f}/{HELD['gp'][0]['rank_correlation']:.2f}"
    worst = " ".join(f"{x:+.1f}" for x in np.sort(d)[:4])
    return (f"  mean {d.mean():+.2f} median {np.median(d):+.2f} wins {np.mean(d > 0):.2f}"
            f"  rank {rank}  worst {worst}")


def main(what: str, problem_name: str, seed: int, budget: int, first: int = 1) -> None:
    if what == "pointwise":
        selection._held_out = _record_held_out(selection._held_out)
    else:
        dag.DAGSurrogate._chain_cv = _record_chain_cv(dag.DAGSurrogate._chain_cv)
        dag.DAGSurrogate._safety_net = _record_forms(dag.DAGSurrogate._safety_net)
    problem, tuner = replay(problem_name, "boanon", seed, budget)
    for step in range(1, budget + 1):
        LOG.clear()
        HELD.clear()
        record = problem.evaluate(tuner.ask())
        tuner.tell(record)
        trial = tuner.last_trial
        print(f"{step:3d} {trial.surrogate:10s} value={tuner.value(record):.4g}"
              + (_pointwise_line() if what == "pointwise" else ""))
        if what != "pointwise" and step >= first:
            print(f"    {trial.reason[:200]}")
            print("\n".join(LOG))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *map(int, sys.argv[3:]))
