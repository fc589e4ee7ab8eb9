"""Structure-learning accuracy and speed on synthetic systems with a known DAG.

Each case is a seeded :class:`boanon.synthetic.SyntheticSystem` (parameter groups driving metric
chains that sum into the objectives, distractor metrics, near-duplicate metrics, inert parameters).
Every learner runs through :func:`boanon.learners.learn` (preprocessing and postprocessing
included), in a child process with a time limit, and is scored against the true graph after the
true graph is contracted through the learner's merged duplicate groups:

* ``precision``/``recall``: directed edges (recall over the edges among ancestors of an objective;
  distractors are dropped on purpose), ``skel_*`` the same ignoring direction;
* ``anc_precision``: learned edges ``a -> b`` with ``a`` a true ancestor of ``b`` (a shortcut past a
  merged or dropped metric still counts);
* ``anc_recall``: parameters that truly affect an objective and have a directed path to it.

    .venv/bin/python -m benchmarks.structure_learning            # the full grid, all learners
    .venv/bin/python -m benchmarks.structure_learning --quick    # one seed, default learner only
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import signal
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.summary import markdown_table
from boanon.learners import DEFAULT_LEARNER, available_learners, learn
from boanon.learners.evaluate import score
from boanon.synthetic import SyntheticSystem

RESULTS = Path(__file__).parent / "results"


@dataclass(frozen=True)
class Case:
    name: str
    n_params: int
    n_groups: int
    chain_length: int
    n_distractors: int
    n_duplicates: int
    n_inert: int
    n_objectives: int
    nonlinear: bool
    noise: float
    n_trials: int

    def system(self, seed: int) -> SyntheticSystem:
        return SyntheticSystem(n_params=self.n_params, n_groups=self.n_groups, chain_length=self.chain_length,
                               n_distractors=self.n_distractors, n_duplicates=self.n_duplicates,
                               n_inert=self.n_inert, n_objectives=self.n_objectives, nonlinear=self.nonlinear,
                               noise=self.noise, seed=seed)


CASES = [
    Case("small-linear", 10, 3, 3, 40, 4, 1, 1, False, 0.3, 30),
    Case("medium-nonlinear", 20, 4, 4, 80, 6, 2, 1, True, 0.3, 50),
    Case("medium-2obj", 20, 4, 4, 80, 6, 2, 2, True, 0.3, 60),
    Case("large-nonlinear", 30, 6, 4, 182, 8, 3, 1, True, 0.3, 100),
    Case("large-2obj-linear", 30, 6, 4, 174, 8, 3, 2, False, 0.3, 100),
]


def _run(case: Case, seed: int, learner: str, cpu_limit: float, queue: mp.Queue) -> None:
    warnings.filterwarnings("ignore")
    system = case.system(seed)
    table = system.sample_table(case.n_trials, seed=seed)
    start, cpu = time.perf_counter(), time.process_time()
    limit = int(cpu + cpu_limit) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))  # SIGXCPU ends a learner over budget
    result = learn(table, learner=learner, seed=seed)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    queue.put({"variables": table.shape[1] - 1, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
               **score(system.true_graph(), result.graph, result.report["merged"])})


def run_one(case: Case, seed: int, learner: str, timeout: float) -> dict[str, Any]:
    """One learner on one seeded case, in a child process given ``timeout`` CPU seconds.

    CPU time, not wall time, is the budget: on a shared machine the wall clock mostly measures
    the other users. A wall-clock backstop of 10x the budget still applies.
    """
    queue: mp.Queue = mp.get_context("fork").Queue()
    proc = mp.get_context("fork").Process(target=_run, args=(case, seed, learner, timeout, queue))
    proc.start()
    proc.join(10 * timeout)
    row: dict[str, Any] = {"case": case.name, "seed": seed, "learner": learner, "trials": case.n_trials}
    if proc.is_alive():
        proc.terminate()
        proc.join()
        return {**row, "status": f"wall clock > {10 * timeout:.0f} s"}
    if queue.empty():
        over = proc.exitcode == -signal.SIGXCPU
        return {**row, "status": f"cpu > {timeout:.0f} s" if over else f"failed (exit {proc.exitcode})"}
    return {**row, **queue.get(), "status": "ok"}


def summarise(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean over seeds per case and learner."""
    ok = rows[rows["status"] == "ok"]
    cols = ["variables", "wall_s", "cpu_s", "edges", "precision", "precision_learned", "recall",
            "skel_precision", "skel_recall", "anc_precision", "anc_recall"]
    table = ok.groupby(["case", "learner"])[cols].mean().round(3)
    def runs_ok(s: pd.Series) -> str:
        return f"{(s == 'ok').sum()}/{len(s)}" + ("" if (s == "ok").all() else f" ({s[s != 'ok'].iloc[0]})")

    runs = rows.groupby(["case", "learner"])["status"].agg(runs_ok)
    out = runs.rename("ok_runs").to_frame().join(table).reset_index()
    order = {c.name: i for i, c in enumerate(CASES)}
    return out.sort_values(["case", "learner"], key=lambda col: col.map(order) if col.name == "case" else col,
                           kind="stable")[["case", "learner", *cols, "ok_runs"]]


def plot(summary: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for learner, grp in summary.groupby("learner"):
        marker = "s" if learner == DEFAULT_LEARNER else "o"
        axes[0].scatter(grp["cpu_s"], grp["precision_learned"], label=learner, marker=marker)
        axes[1].scatter(grp["recall"], grp["precision"], label=learner, marker=marker)
    axes[0].set_xscale("log")
    axes[0].set_xlabel("CPU time per learn() [s]")
    axes[0].set_ylabel("precision of the learned edges")
    axes[1].set_xlabel("directed-edge recall")
    axes[1].set_ylabel("directed-edge precision (all edges)")
    axes[1].legend(fontsize=8)
    fig.suptitle("Structure learning on synthetic systems (one point per case)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learners", nargs="*", default=None, help="default: all registered learners")
    parser.add_argument("--cases", nargs="*", default=None, help="case names (default: all)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=120.0, help="CPU seconds per learn() call")
    parser.add_argument("--quick", action="store_true", help="one seed, default learner")
    parser.add_argument("--out", default="structure_learning", help="results file stem")
    parser.add_argument("--combine", nargs="*", default=None, metavar="RUNS.csv",
                        help="summarise these runs files (of earlier invocations) into one table and plot")
    args = parser.parse_args()
    if args.combine:
        runs = pd.concat([pd.read_csv(f) for f in args.combine], ignore_index=True)
        write_results(runs.drop_duplicates(["case", "seed", "learner"], keep="last"), CASES, args.out)
        return
    learners = [DEFAULT_LEARNER] if args.quick else (args.learners or available_learners())
    cases = [c for c in CASES if not args.cases or c.name in args.cases]
    seeds = range(1 if args.quick else args.seeds)
    rows = []
    for case in cases:
        for learner in learners:
            for seed in seeds:
                row = run_one(case, seed, learner, args.timeout)
                rows.append(row)
                print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}, flush=True)
    write_results(pd.DataFrame(rows), cases, args.out)


def write_results(frame: pd.DataFrame, cases: list[Case], stem: str) -> None:
    """``<stem>_runs.csv`` (one row per run), ``<stem>.csv``/``.md`` (means) and ``<stem>.png``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    frame.to_csv(RESULTS / f"{stem}_runs.csv", index=False)
    summary = summarise(frame)
    summary.to_csv(RESULTS / f"{stem}.csv", index=False)
    (RESULTS / f"{stem}.md").write_text(markdown_table(summary)
                                        + "\ncases: " + "; ".join(str(asdict(c)) for c in cases) + "\n")
    plot(summary, RESULTS / f"{stem}.png")
    print(summary.to_string(index=False))


if __name__ == "__main__":
    main()
