"""``boanon tune``: run the tuning loop described by a YAML file, one line per trial."""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, closing, contextmanager
from pathlib import Path
from typing import NoReturn

import click
from click.core import ParameterSource

from boanon.best import config_line
from boanon.cli.options import StopperSpec
from boanon.cli.outputs import OutputFile
from boanon.cli.progress import Progress
from boanon.errors import Once, StoreError, did_you_mean
from boanon.executors import WorkerLost
from boanon.failures import TooManyFailures
from boanon.multiobjective import OutputConstraint, format_feasible, format_front
from boanon.multitask import RelatedTask
from boanon.objectives import Objective
from boanon.planning.run import PlannedRun
from boanon.results import INIT, best_trial, is_feasible
from boanon.store import MEASURED, RESUME_NOTE, StoredTrial
from boanon.strategies import strategy_names
from boanon.table import names_of
from boanon.tuner import LearnFailure
from boanon.tuning import TuneRequest, TuningRun, open_run, sigterm_interrupts


@click.command("tune")
@click.argument("config_file", metavar="CONFIG.yaml", type=click.Path(exists=True, dir_okay=False))
@click.option("--budget", type=click.IntRange(min=1), default=None,
              help="Number of trials in all (resumed ones included); default: the YAML's budget.")
@click.option("--store", "store_path", type=OutputFile(), default=None,
              help="SQLite file of the run (default: <CONFIG>.db in the current directory).")
@click.option("--resume", is_flag=True, help="Continue the run recorded in --store.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Overrides the YAML's seed.")
@click.option("--strategy", type=click.Choice(strategy_names()), default=None,
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
@click.option("--early-stopping", type=StopperSpec(), default=None, metavar="RULE[:key=value,...]",
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
    ctx = click.get_current_context()
    request = TuneRequest(config_file, budget=budget, store=store_path, resume=resume, seed=seed,
                          strategy=strategy, trials_dir=trials_dir, warm_start=warm_start, workers=workers,
                          dask=dask, early_stopping=early_stopping, trial_timeout=trial_timeout,
                          plan_file=plan_file, max_failures=max_failures)
    try:
        run = ctx.with_resource(open_run(request))  # its writer lock: for the command's life
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    ctx.with_resource(sigterm_interrupts())  # a polite kill stops as cleanly as Ctrl-C, also after the loop
    run.tuner.store.set_note(RESUME_NOTE, resume_command(run.store_file))  # for status, should it be killed
    try:
        _echo_start(run)
        served = ExitStack()  # the dashboard, if asked for, lives as long as the command
        url = _serve_dashboard(run, served, dashboard_port) if dashboard else None
        with served:
            outcome = _loop(run)
            _echo_end(run, outcome)
            if url is not None:
                run.close()  # the page is a view of the store, no writer: a --resume may go on meanwhile
                _keep_serving(url, dashboard_keep)
    except BrokenPipeError:  # standard output's reader went away: `boanon tune ... | head`
        _output_closed(run)


def _output_closed(run: TuningRun) -> NoReturn:
    """Stop as a writer whose pipe closed does (``git log | head``), but cleanly: the loop
    stored its running trials as interrupted (:meth:`Tuner.storing_interrupted`), standard error
    says so and how to resume, unless the budget was spent. Standard output goes to
    /dev/null, so that nothing more (nor Python's flush at exit) raises; the exit status is a
    SIGPIPE death's, 141, for ``set -o pipefail`` scripts. A run closed already (its dashboard
    kept up after the loop) has nothing to resume."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if not run.tuner.store.closed and run.tuner.n_trials() < run.budget:
        try:
            click.echo(f"standard output closed: the run stopped ({run.tuner.n_trials()} of {run.budget} "
                       f"trials; any running are stored as interrupted); continue with\n"
                       f"  {resume_command(run.store_file)}", err=True)
        except OSError:  # standard error was that pipe too
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stderr.fileno())
    sys.exit(141)


def _echo_start(run: TuningRun) -> None:
    """The related tasks, where the run is kept, and the trials a dead run left running."""
    tuner = run.tuner
    starting = next((t for t in tuner.related if t.graph is not None), None)
    for related in tuner.related:
        click.echo(f"warm start: {len(related.table)} trials of {related.label!r} from {related.source}"
                   + (f" ({len(related.dropped)} left out, below)" if related.dropped else "")
                   + (", its graph as the starting structure" if related is starting else ""))
        echo_alignment(related)
    echo_unlogged_outputs(tuner.related, tuner.related_outputs)
    click.echo(f"store {run.store_file}, trials in {run.trials}/, strategy {tuner.strategy}, "
               f"{tuner.n_trials()} of {run.budget} trials done"
               + (" (resumed)" if run.request.resume else ""))
    if run.logged_in is not None:
        click.echo(f"warning: the run logged its trials in {run.logged_in}; these go to {run.trials} "
                   f"(--trials-dir {run.logged_in} keeps them together)", err=True)
    if tuner.n_init >= run.budget and not tuner.proposer.at_random:
        click.echo(f"warning: n_init ({tuner.n_init}) is not below the budget ({run.budget}): every trial "
                   f"is from the initial design and no {tuner.strategy} model proposes one (lower n_init "
                   "or raise the budget)", err=True)
    for trial in run.left_running:
        click.echo(f"{trial.name}: running when the run died: " + (
            "its configuration runs again (once: one the run dies on twice is failed)"
            if trial.interrupted else f"FAILED ({trial.error})"))


def _loop(run: TuningRun) -> PlannedRun | None:
    """:meth:`TuningRun.loop`, one line per trial; how to continue a run that stopped."""
    tuner, store_file = run.tuner, run.store_file
    with Progress(run.budget, tuner.n_trials(), n_init=tuner.n_init) as progress:
        done = tuner.store.trials("done")  # the trials shown: before this session, then line by line

        def report(trial: StoredTrial) -> None:
            # not the store's: workers store the trials that end together before any is shown,
            # and a line's best came from a trial whose line was still to come
            if trial.status == "done":
                done.append(trial)
            figures = progress.count(not trial.interrupted, trial.surrogate != INIT)
            line = trial_line(trial, done, tuner.objectives, tuner.output_constraints,
                              "" if progress.on_terminal else figures)
            progress.show(line, best_values(done, tuner.objectives, tuner.output_constraints))
            warning = structure_warning(tuner.learn_failure, tuner.said)
            if warning:
                progress.warn(warning)

        try:
            return run.loop(report)
        except KeyboardInterrupt:
            progress.close()
            click.echo(f"\ninterrupted: running trials are stored as interrupted; continue with\n"
                       f"  {resume_command(store_file)}", err=True)
            sys.exit(130)
        except TooManyFailures as exc:
            progress.close()
            raise click.ClickException(
                f"run stopped: {exc}\nfix the cause (the runner's options, the system, the YAML), then "
                f"continue with\n  {resume_command(store_file)}") from None
        except WorkerLost as exc:  # the engine could not start (an unreachable Dask scheduler)
            progress.close()
            then = f"continue with\n  {resume_command(store_file)}" if store_file.exists() \
                else "start again (no trial ran: no store was kept)"
            raise click.ClickException(f"run stopped: {exc}\nonce it is reachable, {then}") from None
        except StoreError as exc:  # a full disk: what is stored is intact
            progress.close()
            raise click.ClickException(f"run stopped: {exc}\nevery finished trial is kept; once the "
                                       f"cause is fixed, continue with\n  {resume_command(store_file)}") \
                from None


def _echo_end(run: TuningRun, outcome: PlannedRun | None) -> None:
    """The plan's report, early stopping's count, the best trial (or the front) and what next."""
    tuner, store_file = run.tuner, run.store_file
    if outcome is not None:
        click.echo(outcome.report())
    if run.stopper is not None:
        counts = tuner.store.counts()
        stopped = counts["stopped"]
        click.echo(f"early stopping ({run.stopper.name}): {stopped} of {counts['done'] + stopped} trials "
                   "stopped" + ("" if stopped else f"; none because {run.stopper.why_none_stopped()}"))
    best, done = tuner.best(), tuner.table(("done",))
    if len(tuner.objectives) > 1:
        if not done.empty:  # no trial done, no objective column: the error below says so
            click.echo(format_front(done, tuner.objectives, tuner.output_constraints, max_rows=10))
    else:  # one objective has no front: its best feasible trial, and how many were feasible
        if best is not None:
            click.echo(f"best: {best.name} " + _values(best, tuner.objectives))
            click.echo("  " + config_line(tuner.space, best.config))
        if tuner.output_constraints and not done.empty:
            click.echo(format_feasible(done, tuner.output_constraints))
    counts = tuner.store.counts()
    if not counts["done"] + counts["stopped"]:  # nothing to export or draw: say only where to look
        raise click.ClickException(f"no trial succeeded ({counts['failed']} failed); "
                                   f"see boanon status {store_file}")
    click.echo(f"summary: boanon status {store_file}; the best configuration as a file: boanon export "
               f"{store_file} --best -o best.yaml; figures: boanon plot {store_file} --kind convergence "
               "-o run.png")


def trial_line(trial: StoredTrial, done: list[StoredTrial], objectives: list[Objective],
               constraints: Sequence[OutputConstraint] = (), progress: str = "") -> str:
    """``t0007  cost=1.234  best cost=1.1  [structured]`` (or the failure's reason); the bests are
    among the feasible trials of ``done`` (the loop's: those shown so far); ``progress`` goes
    before the surrogate, which stays last."""
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


def _serve_dashboard(run: TuningRun, served: ExitStack, port: int) -> str:
    """The run's dashboard, served until ``served`` closes; its URL. One that cannot be (its port
    taken, Ctrl-C) ends a run that never started: a fresh run's empty store is removed, as a
    loop's failure before its first trial removes it, or it would refuse the next try."""
    try:
        return served.enter_context(_dashboard(run.store_file, run.trials, port))
    except BaseException:
        run.discard_if_unstarted()
        raise


@contextmanager
def _dashboard(store_file: Path, trials: Path, port: int) -> Iterator[str]:
    """The run's dashboard, served from a background thread of this process."""
    from boanon.dashboard.app import Dashboard, RunView  # the web stack only when asked for

    with ExitStack() as opened:  # the view is closed here if the server is not made (an error, Ctrl-C)
        server = Dashboard(opened.enter_context(closing(RunView(store_file, trials))), port=port)
        opened.pop_all()  # the server closes it as it stops, once no request reads it
    try:
        try:
            url = server.start()
        except RuntimeError as exc:
            raise click.ClickException(f"--dashboard: {exc}") from None
        click.echo(f"dashboard: {url} (a view of the store: it stays up after the run, see --dashboard-keep)")
        yield url
    finally:
        server.stop()  # its store too


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
        if param.is_flag:
            args.append(param.opts[0])
        else:  # a repeated option (--warm-start A --warm-start B) is given once per value
            args += [part for item in (value if param.multiple else (value,))
                     for part in (param.opts[0], str(item))]
    return shlex.join([*args, "--resume"])


def structure_warning(failure: LearnFailure | None, said: Once) -> str | None:
    """The warning for a failed structure learning (``Tuner.learn_failure``), once per error
    (not per retry: ``said`` is the run's :attr:`Tuner.said`): the run goes on with the plain GP,
    which only each trial's stored reason said (a misspelt node in the annotations left a whole
    structured run without its graph)."""
    if failure is None:
        return None
    warning = (f"warning: structure learning failed ({failure.error}); the plain GP proposes until "
               "it succeeds: fix the cause, then resume")
    return warning if said.first(warning) else None


def echo_unlogged_outputs(related: Sequence[RelatedTask], outputs: Sequence[str]) -> None:
    """Warn (on stderr) of each related output no related task logged: a misspelt name was
    modelled from nothing, unsaid, while the warm start taught the model nothing through it."""
    if not related:
        return  # only the run's own trials can log them
    logged = {name for task in related for role in ("metric", "objective")
              for name in names_of(task.table, role)}
    for name in outputs:
        if name not in logged:
            click.echo(f"warning: related_outputs: {name!r} is logged by no related task"
                       f"{did_you_mean(name, logged)}; it teaches the model nothing until this run's "
                       "trials log it", err=True)


def echo_alignment(related: RelatedTask) -> None:
    """Why each related trial was left out, the parameters the system derived from the space's,
    and (once per task, as a warning on stderr) the parameters its trials varied that the space
    cannot use."""
    for reason in related.dropped:
        click.echo(f"  left out: {reason}")
    if related.derived:
        click.echo(f"  not in the search space, derived from parameters in it: "
                   f"{', '.join(f'{name} (from {source})' for name, source in related.derived.items())}")
    if related.unmapped:
        click.echo(f"warning: {related.source}: parameters its trials varied that are not in the "
                   f"search space (not used as causes): {', '.join(related.unmapped)}", err=True)
