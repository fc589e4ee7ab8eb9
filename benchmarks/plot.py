"""Convergence plots: best-so-far against evaluations, median and interquartile band per tuner.

    python -m benchmarks.plot [RESULTS_DIR]

Synthetic problems (known optimum) are drawn as regret on a log scale. Reads only the CSV files
and ``problems.json``, so plots can be redrawn while a run goes on.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from benchmarks.tuners import TUNERS  # noqa: E402

COLORS = {"random": "tab:gray", "tpe": "tab:blue", "optuna-gp": "tab:purple", "smac": "tab:green",
          "boanon": "tab:red", "boanon-gp": "tab:orange", "boanon-expert": "tab:brown",
          "boanon-expert-warm": "tab:pink", "boanon-warm": "tab:cyan",
          "boanon-multitask": "tab:olive", "botorch": "black", "bofn": "gold",
          "boanon-optuna": "darkred", "boanon-predictive": "magenta",
          "boanon-predictive-auto": "crimson", "boanon-tests-only": "salmon", "boanon-network": "goldenrod"}
REGRET_FLOOR = 1e-3


def problem_info(out: Path) -> dict[str, dict]:
    path = out / "problems.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def curves(table: pd.DataFrame, optimum: float | None = None, direction: str = "minimize") -> pd.DataFrame:
    """Per (tuner, evaluation): median, 25th and 75th percentile of best-so-far over seeds.

    With a known optimum the curve is the regret ``best - optimum`` (at least REGRET_FLOOR).
    Each tuner is drawn over the seeds it ran; evaluations where one of them has no successful
    trial yet are left out, not drawn from fewer seeds.
    """
    values = table.pivot_table(index=["tuner", "evaluation"], columns="seed", values="best_so_far",
                               dropna=False)
    if optimum is not None:
        # Observed values are noisy and the optimum is noise-free: clip at the noise floor.
        values = ((values - optimum) * (1 if direction == "minimize" else -1)).clip(lower=REGRET_FLOOR)
    parts = [part.dropna(axis=1, how="all").dropna() for _, part in values.groupby(level="tuner")]
    return pd.concat([pd.DataFrame({"median": v.median(axis=1), "q25": v.quantile(0.25, axis=1),
                                    "q75": v.quantile(0.75, axis=1), "seeds": v.notna().sum(axis=1)})
                      for v in parts])


def plot_problem(csv_path: Path, png_path: Path, info: dict | None = None) -> Path:
    """Draw one problem's convergence plot into ``png_path``."""
    info = info or {}
    table = pd.read_csv(csv_path)
    optimum = info.get("optimum")
    stats = curves(table, optimum, info.get("direction", "minimize"))
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    order = [t for t in TUNERS if t in stats.index.get_level_values(0)]
    for tuner in order:
        s = stats.loc[tuner]
        n_seeds = table[table["tuner"] == tuner]["seed"].nunique()
        color = COLORS.get(tuner)
        ax.plot(s.index, s["median"], color=color, label=f"{tuner} (n={n_seeds})",
                linewidth=2.2 if tuner == "boanon" else 1.4)
        ax.fill_between(s.index, s["q25"], s["q75"], color=color, alpha=0.15, linewidth=0)
    ax.set_xlabel("evaluations")
    objective = info.get("objective", "objective")
    if optimum is not None:
        ax.set_yscale("log")
        ax.set_ylabel(f"regret of best {objective} (log)")
    else:
        ax.set_ylabel(f"best {objective} so far ({info.get('direction', 'minimize')})")
    ax.set_title(f"{csv_path.stem}: median and interquartile range over seeds")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)
    return png_path


def plot_all(out: Path, problems: Iterable[str] | None = None) -> list[Path]:
    """A plot per problem with results in ``out`` (all of them, or those named)."""
    info = problem_info(out)
    names = list(problems) if problems is not None else sorted(info)  # other CSVs may share the folder
    return [plot_problem(out / f"{name}.csv", out / f"{name}.png", info.get(name))
            for name in names if (out / f"{name}.csv").is_file()]


if __name__ == "__main__":
    for written in plot_all(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "results"):
        print(f"wrote {written}")
