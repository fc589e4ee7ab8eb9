"""Where the away suite's verdict stands: one table from the runs that represent today's code.

Rounds ran each cell in its own folder (a change measured on the problems it touched, a peer
where it was missing), so no single folder holds the verdict. ``benchmarks/standing.csv`` names,
per (problem, budget, tuner), the folder whose runs stand for that cell and why (BoAnon's runs
after the last change to its search; the plain GP's after the last change to its proposals;
any generic tuner's, which run no BoAnon code). This prints, per problem and budget, each
tuner's median [IQR] of the best after that many evaluations, the structured run against its
plain GP seed by seed (the first aim: no worse), against every generic tuner's median (the
second aim: ahead of each) and, on the function networks, its regret against BOFN's given the
network after 50 (the third: within 2x):

    python -m benchmarks.standing [--readme benchmarks/README.md]

``benchmarks/held_out.csv`` names the same for the held-out networks (added after the suite's
list was fixed, never tuned on), whose table fills the README's ``held-out`` block:

    python -m benchmarks.standing --manifest benchmarks/held_out.csv --regret --block held-out \
        --readme benchmarks/README.md

A cell's runs are those finished in its folder with the budget the tuner's search depends on
(BoAnon's initial design and SMAC's are sized by it; the others' runs are read at the
evaluation, whatever budget they ran to).
"""

from __future__ import annotations

import argparse
from functools import cache
from pathlib import Path

import pandas as pd

from benchmarks.paired import compare
from benchmarks.problems import make_problem
from benchmarks.run import RESULTS
from benchmarks.summary import GENERIC, LATE, direction_sign, fill_block, fmt_number, markdown_table

MANIFEST = Path(__file__).with_name("standing.csv")
BUDGET_BOUND = ("boanon", "boanon-gp", "smac")
"""Tuners whose search depends on the run's budget: a cell reads only runs of exactly its budget."""
STRUCTURED, PLAIN, CEILING = "boanon", "boanon-gp", "bofn"
Cells = dict[tuple[str, int], dict[str, pd.Series]]
"""(problem, budget) -> tuner -> its bests by seed."""


def cell_bests(folder: Path, problem: str, tuner: str, budget: int) -> pd.Series:
    """Best so far at evaluation ``budget`` of each seed's finished run, indexed by seed."""
    runs = _read(folder / "runs.csv")
    ok = runs[(runs["problem"] == problem) & (runs["tuner"] == tuner) & (runs["status"] == "ok")]
    ok = ok[ok["budget"] == budget] if tuner in BUDGET_BOUND else ok[ok["budget"] >= budget]
    if ok.empty:
        raise SystemExit(f"{folder}: no finished {tuner} run of {problem} with budget "
                         f"{'=' if tuner in BUDGET_BOUND else '>='} {budget}")
    table = _read(folder / f"{problem}.csv")
    at = table[(table["tuner"] == tuner) & (table["evaluation"] == budget) & table["seed"].isin(ok["seed"])]
    return at.drop_duplicates("seed", keep="last").set_index("seed")["best_so_far"].astype(float).sort_index()


@cache
def _read(path: Path) -> pd.DataFrame:
    """A results csv, read once: the manifest names one folder for many cells (only filtered here)."""
    return pd.read_csv(path)


def cells(manifest: pd.DataFrame, results: Path) -> Cells:
    """(problem, budget) -> tuner -> its bests, for every row of the manifest with a folder."""
    out: dict[tuple[str, int], dict[str, pd.Series]] = {}
    for row in manifest.dropna(subset=["folder"]).itertuples(index=False):
        key = (row.problem, int(row.budget))
        out.setdefault(key, {})[row.tuner] = cell_bests(results / row.folder, row.problem, row.tuner, key[1])
    return out


def _spread(values: pd.Series) -> str:
    q25, q75 = values.quantile(0.25), values.quantile(0.75)
    return f"{fmt_number(values.median())} [{fmt_number(q25)}, {fmt_number(q75)}] ({len(values)})"


def seed_by_seed(problem: str, budget: int, first: pd.Series, second: pd.Series) -> str:
    """``b / e / w`` of ``first`` against ``second`` over their common seeds, and the sign test
    (:func:`benchmarks.paired.compare`'s counts)."""
    def bests(values: pd.Series) -> pd.DataFrame:
        return pd.DataFrame({"problem": problem, "budget": budget, "seed": values.index,
                             "best": values.to_numpy()})

    pairs = compare(bests(first), bests(second))
    if pairs.empty:  # no seed in common
        return "0 / 0 / 0 (p = 1)"
    row = pairs.iloc[0]
    return f"{row['better']} / {row['equal']} / {row['worse']} (p = {row['sign_test_p']:.2g})"


def as_regret(by_cell: Cells) -> Cells:
    """Every best as its regret (its distance from the problem's known optimum, minimised): where
    every tuner comes close to the optimum, three digits of the best tell no tuner apart."""
    out = {}
    for (problem, budget), tuners in by_cell.items():
        problem_ = make_problem(problem)
        if problem_.optimum is None:
            raise SystemExit(f"--regret: {problem} has no known optimum (a manifest of problems with one)")
        sign = direction_sign(problem_.objective.direction)
        out[(problem, budget)] = {t: sign * (s - problem_.optimum) for t, s in tuners.items()}
    return out


def verdict(by_cell: Cells, regret: bool = False) -> pd.DataFrame:
    """One row per (problem, budget): the medians and both aims (the medians as regrets when
    ``regret``, :func:`as_regret`; seed by seed, better is better either way)."""
    shown = as_regret(by_cell) if regret else by_cell
    rows = []
    for (problem, budget), raw in sorted(by_cell.items()):
        problem_ = make_problem(problem)
        objective = problem_.objective
        sign = 1 if regret else direction_sign(objective.direction)
        tuners = shown[(problem, budget)]
        label = "regret" if regret else objective.direction[:3]
        mine = tuners.get(STRUCTURED)
        plain = tuners.get(PLAIN)
        peers = {t: s.median() for t, s in tuners.items() if t in GENERIC}
        best_peer = min(peers, key=lambda t: sign * peers[t]) if peers else None
        row = {"problem": f"`{problem}` ({label})", "budget": budget,
               "structured": _spread(mine) if mine is not None else "not run",
               "plain GP": _spread(plain) if plain is not None else "not run",
               "vs plain GP, b / e / w": seed_by_seed(problem, budget, raw[STRUCTURED], raw[PLAIN])
               if mine is not None and plain is not None else "-",
               "best generic": f"{best_peer} {fmt_number(peers[best_peer])}" if best_peer else "not run",
               "generic run": ", ".join(sorted(peers)) or "-"}
        if mine is not None:
            m = mine.median()
            row["aim 1"] = "-" if plain is None else "met" if sign * (m - plain.median()) <= 0 else "missed"
            behind = [t for t, v in peers.items() if sign * (m - v) >= 0]
            row["aim 2"] = "-" if not peers else "missed: " + ", ".join(sorted(behind)) if behind else "met"
        optimum = 0.0 if regret else problem_.optimum
        if budget == LATE and CEILING in tuners and mine is not None and optimum is not None:
            ours, ceiling = sign * (mine.median() - optimum), sign * (tuners[CEILING].median() - optimum)
            row["aim 3: regret vs BOFN's"] = (f"{fmt_number(ours)} vs {fmt_number(ceiling)}: "
                                              + ("met" if ours <= 2 * ceiling else "missed"))
        rows.append(row)
    return pd.DataFrame(rows).fillna("-")


def medians(by_cell: Cells) -> pd.DataFrame:
    """Every tuner's median [IQR] (seeds) per (problem, budget)."""
    order = [STRUCTURED, PLAIN, *GENERIC, CEILING]
    rows = [{"problem": problem, "budget": budget,
             **{t: _spread(tuners[t]) if t in tuners else "-" for t in order}}
            for (problem, budget), tuners in sorted(by_cell.items())]
    return pd.DataFrame(rows)


def markdown(manifest: pd.DataFrame, results: Path, regret: bool = False) -> str:
    by_cell = cells(manifest, results)
    return (markdown_table(verdict(by_cell, regret)) + "\nEvery tuner, median [IQR] (seeds):\n\n"
            + markdown_table(medians(as_regret(by_cell) if regret else by_cell)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.standing", description=__doc__.split("\n")[0])
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--readme", type=Path, help="fill its <!-- BLOCK --> block instead of printing")
    parser.add_argument("--block", default="standing", help="the README block to fill (default: standing)")
    parser.add_argument("--regret", action="store_true", help="tabulate each best's regret (known optima)")
    args = parser.parse_args(argv)
    text = markdown(pd.read_csv(args.manifest, comment="#"), args.results, args.regret)
    if args.readme:
        fill_block(args.readme, args.block, text)
    else:
        print(text)


if __name__ == "__main__":
    main()
