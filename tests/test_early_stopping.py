"""Early-stopping rules on synthetic learning curves with a known ranking."""

from __future__ import annotations

import numpy as np
import pytest

from boanon.early_stopping import MedianStopping, SuccessiveHalving, make_stopper, parse_stopper


def curves(n_trials: int, n_steps: int, seed: int = 0) -> dict[int, np.ndarray]:
    """Per-step times: trial ``i`` has level ``1 + i`` (so trial 0 is best) plus noise."""
    rng = np.random.default_rng(seed)
    return {i: 1.0 + i + 0.2 * rng.standard_normal(n_steps) for i in range(n_trials)}


def run_all(stopper, data: dict[int, np.ndarray], sign: float = 1.0) -> dict[int, int]:
    """Feed trials one after the other (as a sequential loop would); the step each stopped at
    (or the full length)."""
    stopped_at = {}
    for trial, values in data.items():
        stopped_at[trial] = len(values)
        for step, v in enumerate(values, start=1):
            if stopper.report(trial, step, sign * v):
                stopped_at[trial] = step
                break
        stopper.end(trial)
    return stopped_at


def test_median_rule_stops_the_worse_half_and_never_the_best() -> None:
    data = curves(10, 30)
    stopped_at = run_all(MedianStopping(min_trials=3, min_steps=5), data)
    assert all(stopped_at[i] == 30 for i in range(3))  # too few others to judge by
    assert all(stopped_at[i] == 5 for i in range(3, 10))  # worse than the median at the first chance
    fresh = MedianStopping(min_trials=3, min_steps=5)
    reversed_order = run_all(fresh, {i: data[i] for i in reversed(range(10))})
    assert reversed_order[0] == 30 and reversed_order[3] == 30  # better ones arriving late run on


def test_median_rule_waits_for_min_trials_and_min_steps() -> None:
    stopper = MedianStopping(min_trials=2, min_steps=3)
    for step in (1, 2, 3):
        assert not stopper.report(0, step, 1.0)
    assert not stopper.report(1, 3, 5.0)  # only one other trial so far
    assert not stopper.report(2, 2, 9.0)  # before min_steps
    assert stopper.report(2, 3, 9.0)  # two others at step 3, worse than their median
    assert stopper.stopped == {2}
    assert not stopper.report(2, 4, 9.0)  # an ended trial's later reports are ignored


def test_maximize_flips_the_ranking() -> None:
    data = curves(8, 10)
    stopped_at = run_all(MedianStopping(direction="maximize", min_trials=3, min_steps=2), data, sign=-1.0)
    assert all(stopped_at[i] == 2 for i in range(4, 8)) and stopped_at[0] == 10
    up = run_all(MedianStopping(direction="maximize", min_trials=3, min_steps=2), data)
    assert stopped_at != up and up[7] == 10  # larger is now better: the last trial survives


def test_mean_and_last_aggregates_differ_on_a_late_spike() -> None:
    ref = {0: [2.0] * 6, 1: [2.2] * 6, 2: [2.1] * 6}
    late_spike = [1.0, 1.0, 1.0, 1.0, 1.0, 6.0]  # good on average (1.83 < 2.1), bad at the end
    for aggregate, expect in (("mean", False), ("last", True)):
        stopper = MedianStopping(aggregate=aggregate, min_trials=3)
        stopper.replay({t: list(enumerate(v, start=1)) for t, v in ref.items()})
        decisions = [stopper.report(9, s, v) for s, v in enumerate(late_spike, start=1)]
        assert decisions[-1] is expect and not any(decisions[:-1])


def test_asha_keeps_a_third_per_rung_and_the_best_trial_runs_to_the_end() -> None:
    data = curves(27, 27, seed=1)
    asha = SuccessiveHalving(min_resource=1, reduction_factor=3)
    order = np.random.default_rng(2).permutation(27)  # arrival order must not matter for the best
    stopped_at = run_all(asha, {int(i): data[int(i)] for i in order})
    assert stopped_at[0] == 27
    assert sum(s >= 9 for s in stopped_at.values()) <= 27 // 3  # survivors of the rung at 3
    assert sum(s == 27 for s in stopped_at.values()) < sum(s >= 9 for s in stopped_at.values())
    assert [asha.rung_step(k) for k in range(4)] == [1, 3, 9, 27]


def test_asha_first_arrivals_continue_only_while_best() -> None:
    asha = SuccessiveHalving(min_resource=2, reduction_factor=2)
    assert not asha.report(0, 2, 5.0)  # alone at the rung: the best so far
    assert asha.report(1, 2, 6.0)  # two at the rung, one promotable: the better one
    assert not asha.report(2, 2, 4.0)
    assert not asha.report(3, 2, 4.5)  # four at the rung: the best two continue


def test_replay_of_a_resumed_run_restores_references_without_stopping() -> None:
    stopper = make_stopper("median", min_trials=2)
    stopper.replay({0: [(1, 1.0), (2, 1.0)], 1: [(1, 2.0), (2, 2.0)], 2: [(1, 9.0), (2, 9.0)]})
    assert stopper.stopped == set() and stopper.ended == {0, 1, 2}
    assert stopper.others_at(3, 2) == [1.0, 2.0, 9.0]
    assert stopper.report(3, 2, 5.0) and not stopper.report(4, 2, 1.5)


@pytest.mark.parametrize("spec, message", [
    ("asha:min_resource=1e400", "min_resource: expected a whole number, got '1e400'"),  # OverflowError
    ("asha:min_resource=abc", "min_resource: expected a whole number, got 'abc'"),  # '<' not supported
    ("median:min_trials=2.5", "min_trials: expected a whole number, got '2.5'"),    # read as 2
    ("asha:reduction_factor=2.5", "reduction_factor: expected a whole number, got '2.5'"),  # read as 2
    ("median:ended_only=maybe", "ended_only: expected true or false, got 'maybe'"),  # read as true
    ("median:min_steps=0", "min_steps must be >= 1"),  # the rule's own refusal named no spec
    ("asha:reduction_factor=1", "need min_resource >= 1 and reduction_factor >= 2"),
])
def test_an_option_is_read_as_its_type_or_refused_naming_it(spec: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_stopper(spec)
    assert str(info.value) == f"early stopping {spec!r}: {message}"


def test_options_of_each_type_read_as_written() -> None:
    s = parse_stopper("median:ended_only=TRUE,min_trials=2,aggregate=last")
    assert isinstance(s, MedianStopping) and (s.ended_only, s.min_trials, s.aggregate) == (True, 2, "last")
    assert parse_stopper("median:ended_only=false").ended_only is False


def test_parse_stopper_and_errors() -> None:
    s = parse_stopper("asha:min_resource=5,reduction_factor=2,aggregate=last", direction="maximize")
    assert isinstance(s, SuccessiveHalving) and (s.min_resource, s.reduction_factor) == (5, 2)
    assert s.aggregate == "last" and s.direction == "maximize"
    assert isinstance(parse_stopper("median"), MedianStopping)
    with pytest.raises(ValueError, match="unknown early-stopping rule 'ahsa' \\(did you mean 'asha'\\?\\)"):
        parse_stopper("ahsa")
    with pytest.raises(ValueError, match="min_trials=x"):
        parse_stopper("median:min_trials=x")
    # one wording for an option a rule, a runner or a function does not take (was "unexpected
    # option 'min_resorce'; expected some of [...]", without the fix)
    with pytest.raises(ValueError, match="early-stopping rule 'asha' has no option 'min_resorce' "
                                         "\\(did you mean 'min_resource'\\?\\); its options: "):
        parse_stopper("asha:min_resorce=3")
    with pytest.raises(ValueError, match="has no option 'direction'"):  # the run's, not the rule's
        parse_stopper("median:direction=maximize")
    with pytest.raises(ValueError, match="reduction_factor >= 2"):
        SuccessiveHalving(reduction_factor=1)


def test_median_with_ended_only_compares_with_finished_trials_alone() -> None:
    stopper = MedianStopping(min_trials=2, ended_only=True)
    for trial, value in enumerate([1.0, 2.0, 3.0]):
        assert not stopper.report(trial, 1, value)
    stopper.end(0)
    stopper.end(1)
    assert stopper.others_at(3, 1, ended_only=True) == [1.0, 2.0]
    assert stopper.others_at(3, 1) == [1.0, 2.0, 3.0]
    # the running trial 2 (3.0) does not count: 1.6 is above the median of the ended 1.0 and 2.0
    assert stopper.report(3, 1, 1.6)
