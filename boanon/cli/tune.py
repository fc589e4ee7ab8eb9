"""``boanon tune``: run the tuning loop described by a YAML file, one line per trial."""

from __future__ import annotations

import os
import shlex
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from types import FrameType

import click
from click.core import ParameterSource

from boanon.best import config_line
from boanon.cli.progress import Progress
from boanon.config import load_config
from boanon.early_stopping import parse_stopper
from boanon.errors import ConfigError, StoreError
from boanon.failures import FailureStreak, TooManyFailures
from boanon.multiobjective import OutputConstraint, format_front
from boanon.multitask import RelatedTask, load_related
from boanon.objectives import Objective
from boanon.parallel import supports_progress, tune_parallel
from boanon.planning.run import load_plan, run_plan
from boanon.results import INIT, best_trial, is_feasible
from boanon.store import MEASURED, Store, StoredTrial
from boanon.store import trials_dir as store_trials_dir
from boanon.store_lock import WriterLock
from boanon.tuner import STRATEGIES, Tuner

CONFIG_NOTE, TRIALS_NOTE = "config_file", "trials_dir"
"""Store notes: where the run's YAML and trial directories are (``boanon explain --measure``)."""


@click.command("tune")
@click.argument("config_file", metavar="CONFIG.yaml", type=click.Path(exists=True, dir_okay=False))
@click.option("--budget", type=click.IntRange(min=1), default=None,
              help="Number of trials in all (resumed ones included); default: the YAML's budget.")
@click.option("--store", "store_path", type=click.Path(dir_okay=False), default=None,
              help="SQLite file of the run (default: <CONFIG>.db in the current directory).")
@click.option("--resume", is_flag=True, help="Continue the run recorded in --store.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Overrides the YAML's seed.")
@click.option("--strategy", type=click.Choice(STRATEGIES), default=None,
              help="Overrides the YAML's strategy.")
@click.option("--trials-dir", type=click.Path(file_okay=False), default=None,
              help="Where trial logs go (default: <store>.trials beside the store).")
@click.option("--warm-start", type=click.Path(exists=True), multiple=True, metavar="STORE_OR_DATASET",
              help="Trials of a related task (a run's store, a dataset directory or a CSV table) to "
                   "start warm from; repeat it for several tasks; overrides the YAML's warm_start.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Trials in flight at once (asynchronous: a new one starts as soon as any ends).")
@click.option("--dask", default=None, metavar="ADDRESS|local",
              help="Run trials on a Dask cluster (tcp://scheduler:8786) or 'local' (a Dask cluster "
                   "on 127.0.0.1); see docs/parallel.md.")
@click.option("--early-stopping", default=None, metavar="RULE[:key=value,...]",
              help="Stop clearly bad trials of a runner that reports progress: 'median' or 'asha' "
                   "(e.g. asha:min_resource=5,reduction_factor=3).")
@click.option("--trial-timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              metavar="SECONDS", help="Kill a trial running longer and store it as failed.")
@click.option("--dashboard", "dashboard", is_flag=True,
              help="Serve the run's live web page (boanon dashboard) on 127.0.0.1 while it runs.")
@click.option("--dashboard-port", type=click.IntRange(min=0, max=65535), default=8765, show_default=True,
              help="Port of --dashboard (0: any free one).")
@click.option("--dashboard-keep", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
              help="After the run, keep --dashboard up this long [default: on a terminal until Ctrl-C, "
                   "else 0].")
@click.option("--plan", "plan_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Run the plan of 'boanon plan -o' on a local Dask cluster scaled stage by stage "
                   "(its budget and early stopping); see docs/planning.md.")
@click.option("--max-consecutive-failures", "max_failures", type=click.IntRange(min=0), default=5,
              show_default=True, metavar="N",
              help="Stop the run when N trials in a row fail with the same error (0: never).")
def tune_command(config_file: str, budget: int | None, store_path: str | None, resume: bool,
                 seed: int | None, strategy: str | None, trials_dir: str | None,
                 warm_start: tuple[str, ...], workers: int | None, dask: str | None,
                 early_stopping: str | None, trial_timeout: float | None, dashboard: bool,
                 dashboard_port: int, dashboard_keep: float | None, plan_file: str | None,
                 max_failures: int) -> None:
    """Tune the system described by CONFIG.yaml; every trial is kept in the store.

    \b
    Start from your logs: point warm_start (or --warm-start) at what the system already
    wrote (a dataset directory of trial logs, a CSV table, or an earlier run's store). BoAnon
    learns from them, before its first proposal, how the system composes its measurements
    (sums, maxima, shares: `boanon learn DIR` shows them) and a model form per node, then
    tunes with that structure; no annotations needed (an expert's still win).
    """
    created: Path | None = None
    store: Store | None = None
    try:
        config = load_config(config_file)
        plan = load_plan(plan_file, budget, workers, dask, early_stopping) if plan_file else None
        budget = plan.plan.budget if plan else budget or config.budget
        early_stopping = plan.plan.early_stopping if plan else early_stopping
        if budget is None:
            raise ConfigError(config_file, "budget", "missing: set it in the file or pass --budget")
        store_file = Path(store_path or Path(config_file).with_suffix(".db").name)
        trials = store_trials_dir(store_file, trials_dir)
        click.get_current_context().with_resource(WriterLock(store_file))  # for the command's life
        _check_fresh_or_resume(store_file, trials, resume)
        runner = config.make_runner()
        stopper = None if early_stopping is None else \
            parse_stopper(early_stopping, direction=config.objectives[0].direction)
        if stopper is not None and not supports_progress(runner):
            raise ConfigError(config_file, "runner", f"the {config.runner} runner does not report "
                              "progress, so --early-stopping cannot judge its trials")
        related = [load_related(p) for p in (warm_start or config.warm_start)]  # the Tuner aligns them
        created = None if resume else _create(store_file)
        store = Store(store_file, create=not resume)  # a run to resume must be there
        tuner = Tuner(config.space, config.objectives, graph=config.load_graph(),
                      knowledge=config.load_knowledge(), strategy=strategy or config.strategy,
                      seed=config.seed if seed is None else seed, n_init=config.n_init,
                      relearn_every=config.relearn_every, store=store,
                      output_constraints=config.outputs, warm_start=related,
                      related_outputs=config.related_outputs,
                      propose_options=config.propose_options(), budget=budget)
        left_running = tuner.resume() if resume else []  # a fresh store has nothing to take over
    except (ConfigError, ValueError) as exc:
        if store is not None:
            store.close()
        if created is not None:  # a run that never started leaves no store to block the next try
            for path in (created, Path(f"{created}-wal"), Path(f"{created}-shm")):
                with suppress(OSError):  # never mask the reason it did not start
                    path.unlink(missing_ok=True)
        raise click.ClickException(str(exc)) from exc
    tuner.store.set_note(CONFIG_NOTE, str(Path(config_file).resolve()))
    tuner.store.set_note(TRIALS_NOTE, str(trials.resolve()))
    signal.signal(signal.SIGTERM, _interrupt)  # a polite kill stops as cleanly as Ctrl-C
    start = tuner.n_trials()
    starting = next((t for t in tuner.related if t.graph is not None), None)
    for related in tuner.related:
        click.echo(f"warm start: {len(related.table)} trials of {related.label!r} from {related.source}"
                   + (f" ({len(related.dropped)} outside this space left out)" if related.dropped else "")
                   + (", its graph as the starting structure" if related is starting else ""))
        echo_alignment(related)
    click.echo(f"store {store_file}, trials in {trials}/, strategy {tuner.strategy}, "
               f"{start} of {budget} trials done" + (" (resumed)" if resume else ""))
    for trial in left_running:
        click.echo(f"{trial.name}: running when the run died: " + (
            "its configuration runs again (once: one the run dies on twice is failed)"
            if trial.interrupted else f"FAILED ({trial.error})"))
    streak = FailureStreak(max_failures)
    served = ExitStack()  # the dashboard, if asked for, lives as long as the command
    url = served.enter_context(_dashboard(store_file, trials, dashboard_port)) if dashboard else None
    with served:
        with Progress(budget, start, n_init=tuner.n_init) as progress:
            def report(trial: StoredTrial) -> None:
                done = tuner.store.trials("done")
                figures = progress.count(not trial.interrupted, trial.surrogate != INIT)
                line = trial_line(trial, done, tuner.objectives, tuner.output_constraints,
                                  "" if progress.on_terminal else figures)
                progress.show(line, best_values(done, tuner.objectives, tuner.output_constraints))
                streak(trial)

            try:
                if plan is not None:
                    outcome = run_plan(plan, tuner, runner, stopper=stopper, trial_timeout=trial_timeout,
                                       trials_dir=trials, adapter=config.adapter, callback=report)
                elif workers or dask or stopper or trial_timeout:
                    tune_parallel(tuner, runner, budget, workers=workers, dask=dask, stopper=stopper,
                                  trial_timeout=trial_timeout, trials_dir=trials, adapter=config.adapter,
                                  callback=report)
                else:
                    tuner.optimize(runner, budget, trials_dir=trials, adapter=config.adapter, callback=report)
            except KeyboardInterrupt:
                progress.close()
                tuner.store.set_activity("interrupted")
                click.echo(f"\ninterrupted: running trials are stored as interrupted; continue with\n"
                           f"  {resume_command(store_file)}", err=True)
                sys.exit(130)
            except TooManyFailures as exc:
                progress.close()
                tuner.store.set_activity("stopped: too many failures in a row")
                raise click.ClickException(
                    f"run stopped: {exc}\nfix the cause (the runner's options, the system, the YAML), then "
                    f"continue with\n  {resume_command(store_file)}") from None
            except StoreError as exc:  # a full disk: what is stored is intact
                progress.close()
                raise click.ClickException(f"run stopped: {exc}\nevery finished trial is kept; once the "
                                           f"cause is fixed, continue with\n  {resume_command(store_file)}") \
                    from None
        tuner.store.set_activity("finished")
        if plan is not None:
            click.echo(outcome.report())
        if stopper is not None:
            counts = tuner.store.counts()
            stopped = counts["stopped"]
            click.echo(f"early stopping ({stopper.name}): {stopped} of {counts['done'] + stopped} trials "
                       "stopped" + ("" if stopped else f"; none because {stopper.why_none_stopped()}"))
        best = tuner.best()
        if len(tuner.objectives) > 1 or tuner.output_constraints:
            click.echo(format_front(tuner.table(("done",)), tuner.objectives, tuner.output_constraints,
                                    max_rows=10))
        elif best is not None:
            click.echo(f"best: {best.name} " + _values(best, tuner.objectives))
            click.echo("  " + config_line(tuner.space, best.config))
        click.echo(f"summary: boanon status {store_file}; the best configuration as a file: boanon export "
                   f"{store_file} --best -o best.yaml; figures: boanon plot {store_file} --kind convergence "
                   "-o run.png")
        counts = tuner.store.counts()
        if not counts["done"] + counts["stopped"]:
            raise click.ClickException(f"no trial succeeded ({counts['failed']} failed); "
                                       f"see boanon status {store_file}")
        if url is not None:
            _keep_serving(url, dashboard_keep)


def trial_line(trial: StoredTrial, done: list[StoredTrial], objectives: list[Objective],
               constraints: Sequence[OutputConstraint] = (), progress: str = "") -> str:
    """``t0007  cost=1.234  best cost=1.1  [structured]`` (or the failure's reason); the bests are
    among the feasible trials; ``progress`` goes before the surrogate, which stays last."""
    if trial.status not in MEASURED:
        outcome = f"{trial.status.upper()} ({trial.error})"
    else:
        outcome = _values(trial, objectives) + ("  (stopped early)" if trial.status == "stopped" else "") \
            + ("" if is_feasible(trial, constraints) else "  (infeasible)")
    bests = best_values(done, objectives, constraints) + (f"  {progress}" if progress else "")
    return f"{trial.name}  {outcome}  {bests}  [{trial.surrogate}]"


def best_values(done: list[StoredTrial], objectives: list[Objective],
                constraints: Sequence[OutputConstraint] = ()) -> str:
    """``best cost=1.1`` for each objective, among the feasible finished trials."""
    bests = []
    for o in objectives:
        b = best_trial(done, o, constraints)
        bests.append(f"best {o.name}={b.objectives[o.name]:.6g}" if b else f"best {o.name}=-")
    return "  ".join(bests)


def _values(trial: StoredTrial, objectives: list[Objective]) -> str:
    return "  ".join(f"{o.name}={trial.objectives[o.name]:.6g}" for o in objectives)


@contextmanager
def _dashboard(store_file: Path, trials: Path, port: int) -> Iterator[str]:
    """The run's dashboard, served from a background thread of this process."""
    from boanon.dashboard.app import Dashboard, RunView  # the web stack only when asked for

    server = Dashboard(RunView(store_file, trials), port=port)
    try:
        url = server.start()
    except RuntimeError as exc:
        raise click.ClickException(f"--dashboard: {exc}") from None
    click.echo(f"dashboard: {url} (a view of the store: it stays up after the run, see --dashboard-keep)")
    try:
        yield url
    finally:
        server.stop()


def _keep_serving(url: str, keep: float | None) -> None:
    """After the run, the dashboard stays up (it is a view of the store): ``keep`` seconds, or
    until Ctrl-C (None: on a terminal until Ctrl-C, else not at all, so scripts and pipes end)."""
    if keep is None:
        keep = float("inf") if sys.stdin.isatty() and sys.stdout.isatty() else 0.0
    if keep <= 0:
        return
    click.echo(f"the run is over; the dashboard stays up at {url} "
               + ("until Ctrl-C" if keep == float("inf") else f"for {keep:g} s (Ctrl-C stops it)"))
    deadline = time.monotonic() + keep
    try:
        while time.monotonic() < deadline:
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
    except KeyboardInterrupt:
        pass


def resume_command(store_file: Path) -> str:
    """The command that continues this run: the options given on the command line (the same
    budget, workers, seed...), the store, and ``--resume``."""
    ctx = click.get_current_context()
    args = ["boanon", "tune", ctx.params["config_file"], "--store", str(store_file)]
    for param in ctx.command.params:
        if not isinstance(param, click.Option) or param.name in ("store_path", "resume") \
                or ctx.get_parameter_source(param.name) is not ParameterSource.COMMANDLINE:
            continue
        value = ctx.params[param.name]
        args += [param.opts[0]] if param.is_flag else [param.opts[0], str(value)]
    return shlex.join([*args, "--resume"])


def _create(store_file: Path) -> Path:
    """Create the empty store file, failing if it exists: only the call that made it may remove it
    (a fresh start that lost a race to another must not delete the winner's store)."""
    try:
        os.close(os.open(store_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    except FileExistsError:
        raise _already_stored(store_file) from None
    except OSError as exc:
        raise StoreError(store_file, "store", f"cannot open it ({exc.strerror})") from None
    return store_file


def _already_stored(store_file: Path) -> click.ClickException:
    return click.ClickException(f"{store_file}: a run is already stored here; pass --resume to "
                                "continue it or choose another --store")


def _check_fresh_or_resume(store_file: Path, trials: Path, resume: bool) -> None:
    if resume and not store_file.is_file():
        raise click.ClickException(f"{store_file}: no store to resume (drop --resume to start a run)")
    if not resume and store_file.exists():
        raise _already_stored(store_file)
    if not resume and trials.is_dir() and any(trials.iterdir()):
        raise click.ClickException(f"{trials}: holds trials of another run; remove it or pass "
                                   "another --trials-dir")


def echo_alignment(related: RelatedTask) -> None:
    """Why each related trial was left out, and (once per task, as a warning on stderr) the
    parameters its trials varied that the space cannot use."""
    for reason in related.dropped:
        click.echo(f"  left out: {reason}")
    if related.unmapped:
        click.echo(f"warning: {related.source}: parameters its trials varied that are not in the "
                   f"search space (not used as causes): {', '.join(related.unmapped)}", err=True)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt
