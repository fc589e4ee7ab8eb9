"""The summary table of a results folder: medians at fixed budgets, spread, cost, and the aim.

    python -m benchmarks.summary [RESULTS_DIR] [--readme benchmarks/README.md]

With ``--readme`` the table replaces the text between ``<!-- summary:<folder name> -->`` and
``<!-- /summary:<folder name> -->`` in that file (and nothing else), so the README's numbers are
always the ones in the CSV files.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

import pandas as pd

from benchmarks.plot import problem_info
from benchmarks.run import RESULTS
from benchmarks.tuners import TUNERS

EARLY, LATE = 15, 50
"""The verdict's budgets: the first EARLY evaluations, and LATE (see :func:`aim`)."""
GENERIC = ("random", "tpe", "optuna-gp", "smac", "botorch")


def median_at(table: pd.DataFrame, evaluation: int) -> float:
    """Median over seeds of best-so-far at ``evaluation`` (NaN when a run is shorter)."""
    at = table[table["evaluation"] == evaluation]["best_so_far"]
    return float(at.median()) if len(at) else math.nan


def iqr_at(table: pd.DataFrame, evaluation: int) -> tuple[float, float]:
    at = table[table["evaluation"] == evaluation]["best_so_far"]
    return (float(at.quantile(0.25)), float(at.quantile(0.75))) if len(at) else (math.nan, math.nan)


def rows(out: Path) -> list[dict]:
    """One row per (problem, tuner) with results in ``out``."""
    info = problem_info(out)
    runs_path = out / "runs.csv"
    runs = pd.read_csv(runs_path) if runs_path.is_file() else pd.DataFrame()
    out_arg = "" if out.resolve() == RESULTS.resolve() else f" --out {_relative(out)}"
    result = []
    for name in info:
        path = out / f"{name}.csv"
        if not path.is_file():
            continue
        table = pd.read_csv(path)
        for tuner in [t for t in TUNERS if t in set(table["tuner"])]:
            t = table[table["tuner"] == tuner]
            budget = int(t["evaluation"].max())
            seeds = int(t["seed"].nunique())
            ok = runs[(runs["problem"] == name) & (runs["tuner"] == tuner) & (runs["status"] == "ok")
                      & (runs["budget"] == budget)] if len(runs) else runs
            q25, q75 = iqr_at(t, budget)
            optimum = info[name].get("optimum")
            result.append({
                "problem": name, "tuner": tuner, "seeds": seeds, "budget": budget,
                "objective": f"{info[name]['objective']} ({info[name]['direction'][:3]})",
                "early": median_at(t, EARLY), "early_iqr": iqr_at(t, EARLY),
                "late": median_at(t, min(LATE, budget)),
                "final": median_at(t, budget), "q25": q25, "q75": q75,
                "regret": math.nan if optimum is None else
                          (median_at(t, budget) - optimum) * direction_sign(info[name]["direction"]),
                "wall_s": float(ok["wall_s"].mean()) if len(ok) else math.nan,
                "suggest_s": float((ok["suggest_s"] / ok["budget"]).mean()) if len(ok) else math.nan,
                "command": f"python -m benchmarks.run --problems {name} --tuners {tuner} "
                           f"--seeds {seeds} --budget {budget}{out_arg}",
            })
    return result


def aim(rows_: list[dict], info: dict[str, dict]) -> list[str]:
    """The 15-evaluation verdict, per problem: (1) cold BoAnon (``boanon``) after EARLY against
    every generic tuner after EARLY; (2) every BoAnon variant after EARLY against every generic
    tuner after LATE (the warm-started one, ``boanon-warm``, is the one this is asked of);
    (3) every BoAnon variant that ran LATE evaluations against every generic tuner after LATE."""
    lines = []
    for name in dict.fromkeys(r["problem"] for r in rows_):
        by_tuner = {r["tuner"]: r for r in rows_ if r["problem"] == name}
        sign = direction_sign(info[name]["direction"])
        early = {t: r["early"] for t, r in by_tuner.items() if t in GENERIC and r["budget"] >= EARLY}
        late = {t: r["late"] for t, r in by_tuner.items() if t in GENERIC and r["budget"] >= LATE}
        ours = {t: r for t, r in by_tuner.items() if t.startswith("boanon")}
        if "boanon" in ours and early and ours["boanon"]["budget"] >= EARLY:
            lines.append(_check(f"{name}, boanon (cold) @{EARLY} vs generic @{EARLY}", sign,
                                ours["boanon"]["early"], early))
        for t, r in ours.items():
            if late and r["budget"] >= EARLY:
                lines.append(_check(f"{name}, {t} @{EARLY} vs generic @{LATE}", sign, r["early"], late))
        for t, r in ours.items():
            if late and r["budget"] >= LATE:
                lines.append(_check(f"{name}, {t} @{LATE} vs generic @{LATE}", sign, r["late"], late))
        lines += _against_own_gp(name, by_tuner, sign) + _against_bofn(name, by_tuner, info[name])
        if not early and not late:
            lines.append(f"- {name}: no generic tuner ran here; nothing checked.")
        elif ours and all(r["budget"] < EARLY for r in ours.values()):
            lines.append(f"- {name}: BoAnon ran fewer than {EARLY} evaluations here; see its own verdict.")
    return lines


def _against_own_gp(name: str, by_tuner: dict[str, dict], sign: float) -> list[str]:
    """Structured BoAnon no worse than its own plain GP, at EARLY and at LATE."""
    ours, gp = by_tuner.get("boanon"), by_tuner.get("boanon-gp")
    if ours is None or gp is None:
        return []
    lines = []
    for at, key in ((EARLY, "early"), (LATE, "late")):
        if min(ours["budget"], gp["budget"]) >= at:
            verdict = "met" if sign * ours[key] <= sign * gp[key] else "NOT met"
            lines.append(f"- {name}, boanon @{at} vs boanon-gp @{at}: {verdict}: "
                         f"{fmt_number(ours[key])} vs {fmt_number(gp[key])}.")
    return lines


def _against_bofn(name: str, by_tuner: dict[str, dict], info: dict) -> list[str]:
    """Where BOFN ran (given the true network): each BoAnon variant's regret @LATE within 2x of BOFN's."""
    bofn = by_tuner.get("bofn")
    if bofn is None or bofn["budget"] < LATE or info.get("optimum") is None:
        return []
    sign = direction_sign(info["direction"])
    ceiling = sign * (bofn["late"] - info["optimum"])
    lines = []
    for t, r in by_tuner.items():
        if t.startswith("boanon") and r["budget"] >= LATE:
            regret = sign * (r["late"] - info["optimum"])
            verdict = "met" if regret <= 2 * ceiling else "NOT met"
            lines.append(f"- {name}, {t} regret @{LATE} within 2x of bofn's: {verdict}: "
                         f"{fmt_number(regret)} vs {fmt_number(ceiling)}.")
    return lines


def _check(what: str, sign: float, value: float, rivals: dict[str, float]) -> str:
    beaten = [t for t, v in rivals.items() if sign * value < sign * v]
    verdict = "met" if len(beaten) == len(rivals) else "NOT met"
    return (f"- {what}: {verdict}: {fmt_number(value)}; " + ", ".join(
        f"{t} {fmt_number(v)}{'' if t in beaten else ' (better or equal)'}" for t, v in rivals.items()) + ".")


def markdown(out: Path) -> str:
    """The summary table (and the aim check) as Markdown."""
    info = problem_info(out)
    table = rows(out)
    header = (f"| problem | objective | tuner | seeds | budget | median @{EARLY} [IQR] | median @{LATE} "
              f"| median final [IQR] | regret | s/run | s/suggestion | reproduce |")
    lines = [header, "|" + "---|" * 12]
    for r in table:
        lines.append(
            f"| {r['problem']} | {r['objective']} | {r['tuner']} | {r['seeds']} | {r['budget']} "
            f"| {fmt_number(r['early'])} [{fmt_number(r['early_iqr'][0])}, {fmt_number(r['early_iqr'][1])}] "
            f"| {fmt_number(r['late']) if r['budget'] >= LATE else '-'} "
            f"| {fmt_number(r['final'])} [{fmt_number(r['q25'])}, {fmt_number(r['q75'])}] "
            f"| {fmt_number(r['regret'])} "
            f"| {fmt_number(r['wall_s'])} | {fmt_number(r['suggest_s'])} | `{r['command']}` |")
    checks = aim(table, info)
    if checks:
        lines += ["", "Verdict (medians over seeds; 'met': better than every generic tuner's median "
                      "at the budget named):", *checks]
    return "\n".join(lines) + "\n"


def markdown_table(frame: pd.DataFrame) -> str:
    """A DataFrame as a GitHub Markdown table (no tabulate dependency)."""
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def fill_block(readme: Path, name: str, text: str) -> None:
    """Replace what lies between ``<!-- name -->`` and ``<!-- /name -->`` in ``readme``, nothing else."""
    start, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    content = readme.read_text()
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if not pattern.search(content):
        raise SystemExit(f"{readme}: no {start} ... {end} block to fill")
    readme.write_text(pattern.sub(lambda _: f"{start}\n{text}{end}", content))


def direction_sign(direction: str) -> float:
    """+1 where lower is better, -1 where higher is."""
    return 1.0 if direction == "minimize" else -1.0


def fmt_number(v: float) -> str:
    """A table cell: three significant digits, exponent form from 1e4 on, "-" for none."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.3g}" if abs(v) < 1e4 else f"{v:.3e}"


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.summary", description=__doc__.split("\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=RESULTS)
    parser.add_argument("--readme", type=Path, help="fill this file's summary block for the folder")
    args = parser.parse_args(argv)
    text = markdown(args.out)
    if args.readme:
        fill_block(args.readme, f"summary:{args.out.name}", text)
    print(text, end="")


if __name__ == "__main__":
    main()
