"""Pareto-front and hypervolume plots (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from itertools import combinations
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from boanon.multiobjective.feasibility import OutputConstraint, observed_feasible  # noqa: E402
from boanon.multiobjective.summary import pareto_flags  # noqa: E402
from boanon.objectives import Objective  # noqa: E402
from boanon.table import column  # noqa: E402
from boanon.units import count, objective_label  # noqa: E402


def plot_pareto(table: pd.DataFrame, objectives: Sequence[Objective], path: str | Path,
                constraints: Sequence[OutputConstraint] = (), title: str | None = None,
                known_front: np.ndarray | None = None, ref_point: Sequence[float] | None = None,
                ref_how: str = "") -> Path:
    """Scatter of every trial with the feasible Pareto front highlighted; one panel per pair of
    objectives (three objectives give three panels). ``known_front`` (points in the objectives'
    units), where the true front is known, is drawn for comparison; ``ref_point`` (the
    objectives' units), the hypervolume's reference point that ``boanon status`` and the
    dashboard print, is drawn with its values and ``ref_how`` (what it is). Returns the written file."""
    if len(objectives) < 2:
        raise ValueError("a Pareto plot needs at least two objectives")
    on_front = pareto_flags(table, objectives, constraints).to_numpy()
    feasible = observed_feasible(table, constraints)
    pairs = list(combinations(range(len(objectives)), 2))
    fig, axes = plt.subplots(1, len(pairs), figsize=(5 * len(pairs), 4.2), squeeze=False)
    for ax, (i, j) in zip(axes[0], pairs, strict=True):
        x = pd.to_numeric(table[column("objective", objectives[i].name)], errors="coerce").to_numpy()
        y = pd.to_numeric(table[column("objective", objectives[j].name)], errors="coerce").to_numpy()
        if known_front is not None:
            ax.scatter(known_front[:, i], known_front[:, j], s=2, c="tab:green", alpha=0.3,
                       label="true front")
        ax.scatter(x[feasible & ~on_front], y[feasible & ~on_front], s=14, c="0.6", label="trials")
        if constraints and (~feasible).any():
            ax.scatter(x[~feasible], y[~feasible], s=16, c="tab:red", marker="x", label="infeasible")
        ax.scatter(x[on_front], y[on_front], s=28, c="tab:blue", zorder=3, label="Pareto front")
        if len(objectives) == 2 and on_front.any():
            _staircase(ax, x[on_front], y[on_front], objectives[i])
        if ref_point is not None:
            ax.scatter([ref_point[i]], [ref_point[j]], s=60, marker="D", c="tab:orange", zorder=4,
                       label=f"hypervolume reference point ({ref_point[i]:.4g}, {ref_point[j]:.4g})")
        ax.set_xlabel(f"{objective_label(objectives[i])}, {objectives[i].direction}d")
        ax.set_ylabel(f"{objective_label(objectives[j])}, {objectives[j].direction}d")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    how = ""  # what the reference point is, wrapped at about 11 characters to an inch of the figure
    if ref_point is not None and ref_how:
        how = textwrap.fill(f"reference point: {ref_how}", 11 * 5 * len(pairs))
    fig.suptitle(title or f"Pareto front: {int(on_front.sum())} of {count(len(table), 'trial')}"
                 + (f"\n{how}" if how else ""), fontsize=10 if how else None)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _staircase(ax, x: np.ndarray, y: np.ndarray, ox: Objective) -> None:
    """The attainment boundary of a 2-D front, drawn as steps: from the point best in ``x`` on,
    each point's ``y`` holds until the next one's ``x``, whatever the directions (what lies
    between two points is attained by the one better in ``x`` alone). Stepping first in ``y``
    where the directions differ (minimised time, maximised ratio) drew the corner better than
    both points, a trade-off no trial reached."""
    order = np.argsort(ox.to_minimize(x), kind="stable")
    ax.step(x[order], y[order], where="post", c="tab:blue", lw=1, alpha=0.7)


def plot_traces(traces: Mapping[str, np.ndarray], path: str | Path, ylabel: str = "hypervolume",
                title: str = "") -> Path:
    """Mean and one standard error over repeats of each method's trace (repeats x budget)."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, runs in traces.items():
        runs = np.atleast_2d(np.asarray(runs, dtype=float))
        steps = np.arange(1, runs.shape[1] + 1)
        mean = runs.mean(axis=0)
        se = runs.std(axis=0, ddof=1) / np.sqrt(len(runs)) if len(runs) > 1 else np.zeros_like(mean)
        ax.plot(steps, mean, label=name)
        ax.fill_between(steps, mean - se, mean + se, alpha=0.2)
    ax.set_xlabel("trials")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
