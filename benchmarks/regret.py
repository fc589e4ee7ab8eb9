"""Regret curves of BoAnon's three strategies on seeded synthetic structured systems.

    python -m benchmarks.regret                          # 5 seeds x 40 trials (~15 min on 2 cores)
    python -m benchmarks.regret --seeds 3 --budget 20    # a quick look

Every run is the loop a user gets from ``boanon tune``: :meth:`Tuner.optimize` with the
``callable`` runner, trial directories, ``result.json`` parsed by the ``table`` adapter and a
SQLite store. Seed ``s`` tunes ``SyntheticSystem(seed=s)`` (12 parameters in 4 subsystems, each
with a chain of intermediate metrics, plus distractor and duplicate metrics) with tuner seed
``s``, so the seeds are different problems. Regret after trial ``k`` is the noise-free cost of
the incumbent (the best *observed* trial so far, what the tuner would hand back) minus the known
optimum. Finished runs are appended to the CSV as they end; a rerun skips them.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402

from boanon.runners import make_runner  # noqa: E402
from boanon.strategies import strategy_names  # noqa: E402
from boanon.synthetic import SyntheticSystem  # noqa: E402
from boanon.tuner import Tuner  # noqa: E402

RESULTS = Path(__file__).parent / "results"
COLUMNS = ["strategy", "seed", "trial", "cost", "true_cost", "regret", "surrogate", "seconds"]
COLORS = {"structured": "tab:red", "gp": "tab:orange", "random": "tab:gray"}
REGRET_FLOOR = 1e-3


def system_for(seed: int) -> SyntheticSystem:
    return SyntheticSystem(n_params=12, n_groups=4, seed=seed)


def regret_run(strategy: str, seed: int, budget: int, n_init: int = 6) -> pd.DataFrame:
    """One seeded run of ``strategy``; one row per trial with the incumbent's regret."""
    system = system_for(seed)
    optimum = system.optimum()["cost"]
    runner = make_runner("callable", function=system.evaluate, objectives=["cost"])
    with tempfile.TemporaryDirectory(prefix="boanon-regret-") as tmp:
        with Tuner(system.space, ["cost"], strategy=strategy, seed=seed, n_init=n_init,
                   store=Path(tmp) / "run.db") as tuner:
            start = time.perf_counter()
            stamps: list[float] = []
            tuner.optimize(runner, budget, callback=lambda t: stamps.append(time.perf_counter() - start))
            trials = tuner.store.trials()
    rows, incumbent = [], (np.inf, np.inf)
    for k, (t, seconds) in enumerate(zip(trials, stamps, strict=True)):
        cost = t.objectives.get("cost", np.nan)
        if np.isfinite(cost) and cost < incumbent[0]:
            incumbent = (cost, system.evaluate(t.config, noise=False)["cost"])
        rows.append({"strategy": strategy, "seed": seed, "trial": k + 1, "cost": cost,
                     "true_cost": incumbent[1], "regret": incumbent[1] - optimum,
                     "surrogate": t.surrogate, "seconds": round(seconds, 2)})
    return pd.DataFrame(rows, columns=COLUMNS)


def summarise(table: pd.DataFrame, at: list[int]) -> pd.DataFrame:
    """Median regret per strategy at a few budgets, and how many seeds each strategy wins."""
    out = table[table["trial"].isin(at)].pivot_table(index="strategy", columns="trial", values="regret",
                                                     aggfunc="median")
    out.columns = [f"median regret @{c}" for c in out.columns]
    final = table[table["trial"] == table["trial"].max()].pivot(index="seed", columns="strategy",
                                                                 values="regret")
    if "structured" in final:
        for other in [s for s in final.columns if s != "structured"]:
            out.loc["structured", f"seeds better than {other}"] = \
                f"{int((final['structured'] < final[other]).sum())}/{len(final)}"
    out["seconds per run"] = table.groupby(["strategy", "seed"])["seconds"].max().groupby("strategy").median()
    return out


def plot(table: pd.DataFrame, path: Path) -> None:
    """Median and interquartile band of the regret over seeds, per strategy (log scale)."""
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for strategy in [s for s in strategy_names() if s in set(table["strategy"])]:
        values = table[table["strategy"] == strategy].pivot(index="trial", columns="seed",
                                                            values="regret").clip(lower=REGRET_FLOOR)
        values = values.replace(np.inf, np.nan).dropna()
        ax.plot(values.index, values.median(axis=1), color=COLORS[strategy],
                label=f"{strategy} (n={values.shape[1]})", linewidth=2.0 if strategy == "structured" else 1.4)
        ax.fill_between(values.index, values.quantile(0.25, axis=1), values.quantile(0.75, axis=1),
                        color=COLORS[strategy], alpha=0.15, linewidth=0)
    ax.set_yscale("log")
    ax.set_xlabel("trials")
    ax.set_ylabel("regret of the incumbent (noise-free cost - optimum)")
    ax.set_title("SyntheticSystem, 12 params in 4 subsystems: median, IQR over seeds", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument("--strategies", nargs="+", choices=strategy_names(), default=strategy_names())
    parser.add_argument("--out", type=Path, default=RESULTS / "regret.csv")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table = pd.read_csv(args.out) if args.out.is_file() else pd.DataFrame(columns=COLUMNS)
    done = {(s, int(seed)) for s, seed, n in table.groupby(["strategy", "seed"]).size().reset_index()
            .itertuples(index=False) if n >= args.budget}
    for seed in range(args.seeds):
        for strategy in args.strategies:
            if (strategy, seed) in done:
                continue
            run = regret_run(strategy, seed, args.budget)
            print(f"{strategy:10s} seed {seed}: final regret {run['regret'].iloc[-1]:.4g} "
                  f"({run['seconds'].iloc[-1]:.0f} s)", flush=True)
            table = pd.concat([table[(table["strategy"] != strategy) | (table["seed"] != seed)], run])
            table.to_csv(args.out, index=False)
    table = pd.read_csv(args.out)  # typed columns, whether the runs are new or read back
    table = table[table["trial"] <= args.budget]
    plot(table, args.out.with_suffix(".png"))
    at = sorted({min(10, args.budget), args.budget // 2, args.budget})
    print(summarise(table, at).to_string())


if __name__ == "__main__":
    main()
