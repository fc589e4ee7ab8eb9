"""BoAnon's own overhead: structure learning and one suggestion, as trials and variables grow.

    python -m benchmarks.overhead [--out benchmarks/results/overhead] [--limit 300] [--repeats 3]
                                  [--readme FILE]

Two sweeps over synthetic systems (known structure, realistic shape: parameter groups driving
metric chains, distractor and duplicate metrics): the number of finished trials at about 100
variables, and the number of variables at 50 trials. Each point times ``boanon.learners.learn``
(default learner) on the table and then one ``boanon.acquisition.propose`` with the structured
strategy and the learned graph (which also fits and cross-validates the plain GP). Every point runs
in its own process under a time limit, so one slow point is reported as such, not waited for.
Wall and CPU seconds are both recorded: on a shared machine the wall time mostly measures the
neighbours.
Writes ``overhead.csv`` and ``overhead.png``.

``--warm``: instead, one suggestion of a run on the SGD cluster (35 parameters, ~110 logged
quantities) started warm from its 40-trial dataset, the way ``examples/sgd-from-logs.yaml``
runs, with three trials of its own: the suggestion that first learns the graph, its relations
and forms from the 43 trials, without and with the expert's formula nodes
(``examples/sgd-annotations.yaml``). Writes ``overhead_warm.csv``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time
from collections.abc import Iterable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from benchmarks.run import RESULTS  # noqa: E402
from boanon.synthetic import SyntheticSystem  # noqa: E402

TRIALS = (20, 50, 100, 200)
TRIALS_AT_VARIABLES = 100
VARIABLES = (50, 100, 250, 500)
VARIABLES_AT_TRIALS = 50


def system_with(n_variables: int, seed: int = 0) -> SyntheticSystem:
    """A synthetic system with about ``n_variables`` columns: a fifth of them parameters."""
    n_params = max(4, n_variables // 5)
    n_groups = max(2, n_params // 5)
    n_duplicates = max(2, n_variables // 50)
    n_distractors = n_variables - n_params - 3 * n_groups - n_duplicates - 1
    return SyntheticSystem(n_params=n_params, n_groups=n_groups, chain_length=3,
                           n_distractors=max(0, n_distractors), n_duplicates=n_duplicates, seed=seed)


def measure(n_trials: int, n_variables: int, seed: int) -> dict:
    """Time learning and one structured suggestion on ``n_trials`` random trials (one process)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from boanon.acquisition import propose
    from boanon.learners import learn
    from boanon.objectives import Objective

    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    system = system_with(n_variables, seed)
    table = system.sample_table(n_trials, seed=seed)
    t0, c0 = time.perf_counter(), time.process_time()
    graph = learn(table, seed=seed).graph
    t1, c1 = time.perf_counter(), time.process_time()
    proposal = propose(system.space, table, [Objective("cost")], graph=graph, proposer="structured",
                       rng=np.random.default_rng(seed))
    t2, c2 = time.perf_counter(), time.process_time()
    return {"variables": table.shape[1] - 1, "learn_s": t1 - t0, "suggest_s": t2 - t1,
            "learn_cpu_s": c1 - c0, "suggest_cpu_s": c2 - c1, "edges": len(graph.edges),
            "surrogate": proposal.surrogate}


def measure_warm(annotations: bool, seed: int) -> dict:
    """Wall and CPU seconds of the first structured suggestion of a warm-started SGD run."""
    import warnings

    from benchmarks.problems import make_problem
    from boanon.annotations import Knowledge
    from boanon.multitask.warmstart import load_related
    from boanon.tuner import Tuner

    warnings.simplefilter("ignore")
    problem = make_problem("sgd")
    knowledge = Knowledge.from_yaml(problem.knowledge["annotations"]) if annotations else None
    tuner = Tuner(problem.space, [problem.objective], knowledge=knowledge, seed=seed,
                  warm_start=load_related(problem.knowledge["warm_start"]))
    while tuner.n_trials() < tuner.n_init:
        trial = tuner.ask()
        tuner.tell(trial.id, problem.evaluate(dict(trial.config)))
    t0, c0 = time.perf_counter(), time.process_time()
    trial = tuner.ask()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    timings = trial.info.get("timings_s", {})
    return {"annotations": annotations, "seed": seed, "suggest_s": wall, "suggest_cpu_s": cpu,
            "learn_s": wall - timings.get("total", 0.0), "propose_s": timings.get("total", np.nan),
            "surrogate": trial.surrogate}


def _child(queue: mp.Queue, n_trials: int, n_variables: int, seed: int) -> None:
    try:
        queue.put(measure(n_trials, n_variables, seed))
    except Exception as exc:  # reported in the table rather than lost with the process
        queue.put({"error": f"{type(exc).__name__}: {exc}"})


def measure_limited(n_trials: int, n_variables: int, seed: int, limit: float) -> dict:
    """:func:`measure` in a child process, killed after ``limit`` seconds."""
    queue: mp.Queue = mp.get_context("fork").Queue()
    proc = mp.get_context("fork").Process(target=_child, args=(queue, n_trials, n_variables, seed))
    start = time.perf_counter()
    proc.start()
    proc.join(limit)
    if proc.is_alive():
        proc.terminate()
        proc.join()
        return {"error": f"over the {limit:g} s limit"}
    result = queue.get() if not queue.empty() else {"error": f"exit code {proc.exitcode}"}
    result["wall_s"] = time.perf_counter() - start
    return result


def sweep(limit: float, seed: int = 0, repeats: int = 1) -> pd.DataFrame:
    """Both sweeps, each point on ``repeats`` systems and tables (seeds ``seed`` on), as medians.

    Once a point fails or runs over the limit, larger points of its sweep are skipped.
    """
    points = [("trials", n, TRIALS_AT_VARIABLES) for n in TRIALS] + \
             [("variables", VARIABLES_AT_TRIALS, d) for d in VARIABLES]
    rows, stopped = [], set()
    for sweep_name, n, d in points:
        row = {"sweep": sweep_name, "trials": n, "target_variables": d, "repeats": repeats}
        if sweep_name in stopped:
            row["error"] = "skipped: a smaller point failed or ran over the limit"
        else:
            row.update(_median(measure_limited(n, d, s, limit) for s in range(seed, seed + repeats)))
            if "error" in row:
                stopped.add(sweep_name)
        print(row, flush=True)
        rows.append(row)
    return pd.DataFrame(rows)


def _median(results: Iterable[dict]) -> dict:
    """Medians of the repeats' numbers (max of the CPU seconds beside them), the most frequent
    surrogate; the first error if any repeat failed."""
    results = list(results)
    errors = [r["error"] for r in results if "error" in r]
    if errors:
        return {"error": errors[0]}
    frame = pd.DataFrame(results)
    out = frame.select_dtypes("number").median().to_dict()
    out["suggest_cpu_max_s"] = float(frame["suggest_cpu_s"].max())
    out["surrogate"] = frame["surrogate"].mode().iloc[0]
    return out


def plot(table: pd.DataFrame, path: Path) -> Path:
    """Learning and suggestion time against trials (left) and variables (right)."""
    fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.8))
    for ax, (name, x) in zip(axes, (("trials", "trials"), ("variables", "target_variables")), strict=True):
        part = table[(table["sweep"] == name) & table["learn_s"].notna()]
        ax.plot(part[x], part["learn_s"], "o-", color="tab:blue", label="structure learning (wall)")
        ax.plot(part[x], part["learn_cpu_s"], "o:", color="tab:blue", label="structure learning (CPU)")
        ax.plot(part[x], part["suggest_s"], "s-", color="tab:red", label="one suggestion (wall)")
        ax.plot(part[x], part["suggest_cpu_s"], "s:", color="tab:red", label="one suggestion (CPU)")
        ax.set_xlabel(f"{name} ({'variables' if name == 'trials' else 'trials'} fixed at "
                      f"{TRIALS_AT_VARIABLES if name == 'trials' else VARIABLES_AT_TRIALS})")
        ax.set_ylabel("seconds")
        ax.set_yscale("log")
        ax.axhline(1.0, color="gray", linestyle=":", linewidth=1)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("BoAnon overhead (2 shared CPU cores)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def markdown(table: pd.DataFrame) -> str:
    """The sweeps as a Markdown table (seconds: wall on the shared machine, and CPU)."""
    lines = ["| sweep | trials | variables | repeats | learn wall s | learn CPU s | suggest wall s "
             "| suggest CPU s | suggest CPU s, worst repeat | edges | surrogate chosen | note |",
             "|" + "---|" * 12]
    for r in table.to_dict("records"):
        cells = [r["sweep"], r["trials"], r["target_variables"], r.get("repeats", 1)] + \
                [f"{r[c]:.2f}" if pd.notna(r.get(c)) else "-"
                 for c in ("learn_s", "learn_cpu_s", "suggest_s", "suggest_cpu_s", "suggest_cpu_max_s")] + \
                [f"{r['edges']:g}" if pd.notna(r.get("edges")) else "-", r.get("surrogate") or "-",
                 r["error"] if isinstance(r.get("error"), str) else ""]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.overhead", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS / "overhead")
    parser.add_argument("--limit", type=float, default=300.0, help="seconds per point")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="systems per point (medians reported)")
    parser.add_argument("--readme", type=Path, help="fill this file's <!-- overhead --> block")
    parser.add_argument("--warm", action="store_true",
                        help="time one suggestion of a warm-started SGD run instead (module docstring)")
    parser.add_argument("--from-csv", action="store_true",
                        help="redraw the plot and table from an existing overhead.csv, measure nothing")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.warm:
        warm = pd.DataFrame([measure_warm(a, s) for a in (False, True)
                             for s in range(args.seed, args.seed + args.repeats)])
        warm.to_csv(args.out / "overhead_warm.csv", index=False)
        print(warm.to_string(index=False))
        print(warm.groupby("annotations")[["suggest_s", "suggest_cpu_s", "learn_s", "propose_s"]].median())
        return
    if args.from_csv:
        table = pd.read_csv(args.out / "overhead.csv")
    else:
        table = sweep(args.limit, args.seed, args.repeats)
        for column in ("learn_s", "suggest_s", "learn_cpu_s", "suggest_cpu_s", "suggest_cpu_max_s",
                       "wall_s", "error"):
            if column not in table:
                table[column] = np.nan
        table.to_csv(args.out / "overhead.csv", index=False)
    print(table.to_string(index=False))
    print(f"wrote {plot(table, args.out / 'overhead.png')}")
    if args.readme:
        from benchmarks.summary import fill_block

        fill_block(args.readme, "overhead", markdown(table))


if __name__ == "__main__":
    main()
