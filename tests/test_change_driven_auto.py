"""change_driven="auto": bulk while the moving vertices own more than pull_fraction of the
out-edges, change-driven below; results against the float64 oracles and bulk runs."""

import numpy as np
import pandas as pd
import pytest

import oracles
import oracles_learning
from graphs import build, csr_edges
from onyx_rapids import Execution, Graph, device, properties as props
from onyx_rapids.algorithms.label_propagation import label_propagation
from onyx_rapids.algorithms.pagerank import pagerank, personalized_pagerank
from onyx_rapids.io import to_pandas

BULK, CD = "bulk", "change-driven"


def _path(n=14):
    """An undirected path: a personalized walk from one end spreads one hop an iteration."""
    return Graph.from_edgelist(pd.DataFrame({"src": np.arange(n - 1), "dst": np.arange(1, n)}),
                               directed=False)


def test_execution_accepts_auto_and_names_the_choices():
    assert Execution(change_driven="auto").change_driven == "auto"
    with pytest.raises(ValueError, match="change_driven must be True, False or 'auto'"):
        Execution(change_driven="sometimes")


def test_algorithms_without_auto_and_fixed_directions_refuse_it():
    from onyx_rapids import registry
    with pytest.raises(ValueError, match="als does not support change_driven='auto'"):
        registry.get("als").resolve(change_driven="auto")
    with pytest.raises(ValueError, match="belief_propagation does not support"):
        registry.get("belief_propagation").resolve(change_driven="auto")
    for name in ("pagerank", "label_propagation", "multimodal_learning"):
        with pytest.raises(ValueError, match=f"{name} does not support change_driven='auto' "
                                             "with direction='push'"):
            registry.get(name).resolve(change_driven="auto", direction="push")
    assert registry.get("personalized_pagerank").resolve(change_driven="auto").fused is None


def test_moved_rows_and_commit_rows():
    old = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=np.float32)
    new = old + np.array([[0.0, 0.5], [0.01, 0.0], [0.0, 0.0]], dtype=np.float32)
    movers = props.moved_rows(device.asarray(new), device.asarray(old), 0.1)
    assert device.to_host(movers).tolist() == [True, False, False]
    pushed, delta = device.asarray(np.zeros_like(old)), device.asarray(np.full_like(old, 9.0))
    props.commit_rows(device.asarray(new), device.asarray(old), movers, pushed, delta)
    np.testing.assert_array_equal(device.to_host(pushed), [[1.0, 2.5], [3.0, 4.0], [5.0, 6.0]])
    np.testing.assert_array_equal(device.to_host(delta), [[0.0, 0.5], [0.0, 0.0], [0.0, 0.0]])


@pytest.mark.parametrize("fused", [None, False])
def test_personalized_walk_switches_both_ways_and_matches_the_oracle(fused):
    g = _path()
    src, dst = csr_edges(g)
    start = device.to_host(g.to_internal(np.array([0])))[0]
    teleport = np.eye(g.n)[start]
    df, info = pagerank(g, alpha=0.5, tol=1e-7, personalization=pd.DataFrame(
        {"vertex": [0], "p": [1.0]}), change_driven="auto", fused=fused, return_info=True)
    assert info.converged and info.change_driven == "auto" and info.fused is (fused is None)
    modes = info.modes
    assert len(modes) == len(info.directions) == info.iterations
    # few vertices move at first (change-driven), then the walk has spread (bulk again)
    first_cd = modes.index(CD)
    assert BULK in modes[first_cd:]
    assert all(d == ("push" if m == CD else "pull") for m, d in zip(modes, info.directions))
    expected = oracles.pagerank(g.n, src, dst, alpha=0.5, teleport=teleport)
    got = to_pandas(df)["pagerank"].to_numpy(dtype=np.float64)
    assert np.abs(got - expected).sum() <= 1e-5


@pytest.mark.parametrize("fraction, expect", [(0.0, [BULK]), (1.0, [BULK, CD])])
def test_pull_fraction_sets_the_switch_point(fraction, expect):
    """0: change-driven only once nothing moves; 1: change-driven from the second iteration."""
    g = build("directed", seed=6)
    src, dst = csr_edges(g)
    sources = device.to_host(g.vertices)[[0, 5]]
    # alpha 0.6: fewer iterations (CI time); the switch point is pull_fraction's alone
    df, info = personalized_pagerank(g, sources, alpha=0.6, tol=1e-6, change_driven="auto",
                                     pull_fraction=fraction, return_info=True)
    assert info.converged
    assert sorted(set(info.modes), key=[BULK, CD].index) == expect
    assert info.modes[0] == BULK and (fraction == 0.0 or info.modes[1] == CD)
    expected = oracles_learning.personalized_pagerank(g.n, src, dst, [0, 5], alpha=0.6)
    got = to_pandas(df)[["ppr_0", "ppr_1"]].to_numpy(dtype=np.float64)
    assert np.abs(got - expected).sum(axis=0).max() <= 1e-4


def test_bulk_iterations_count_the_movers_out_edges_in_their_stop_test(monkeypatch):
    """Under "auto" a bulk iteration's in-kernel stop test (label propagation's) adds up the
    moved rows' out-edges, so the rows are compared in a pass of their own only at the switch:
    with pull_fraction 0 never, with 1 once; the results stay bulk's."""
    from onyx_rapids.algorithms._propagate import stops

    calls, counts = [], []
    real_rows, real_count = props.moved_rows, stops.moved_edges
    monkeypatch.setattr(props, "moved_rows", lambda *a: calls.append(1) or real_rows(*a))
    monkeypatch.setattr(stops, "moved_edges",
                        lambda args: counts.append(real_count(args)) or counts[-1])
    g = _path(6)
    seeds = pd.DataFrame({"vertex": [0, 5], "label": [0, 1]})
    tol = 1e-4  # 13 iterations a run, not the default 1e-6's 20 (CI time)
    bulk = to_pandas(label_propagation(g, seeds, k=2, tol=tol))[["lp_0", "lp_1"]].to_numpy()
    for fraction, switches in ((0.0, 0), (1.0, 1)):
        calls.clear()
        counts.clear()
        df, info = label_propagation(g, seeds, k=2, tol=tol, change_driven="auto",
                                     pull_fraction=fraction, return_info=True)
        assert info.converged and len(calls) == switches
        assert (CD in info.modes) == (switches == 1)
        if not switches:  # every bulk iteration but the converged last one counted
            assert len(counts) == len(info.modes) - 1 and info.modes.count(BULK) == len(info.modes)
        # iteration 1 moves the path's 4 unlabelled vertices (8 out-edges) or fewer
        assert 0 < counts[0] <= 2 * (g.n - 1)
        got = to_pandas(df)[["lp_0", "lp_1"]].to_numpy()
        assert np.abs(got - bulk).max() <= 1e-5


def test_label_propagation_auto_agrees_with_bulk():
    g = _path(8)
    seeds = pd.DataFrame({"vertex": [0, 7], "label": [0, 1]})
    auto, info = label_propagation(g, seeds, k=2, change_driven="auto", return_info=True)
    auto, bulk = to_pandas(auto), to_pandas(label_propagation(g, seeds, k=2))
    assert info.converged and CD in info.modes
    cols = ["lp_0", "lp_1"]
    assert np.abs(auto[cols].to_numpy() - bulk[cols].to_numpy()).max() <= 1e-5
    assert auto["label"].tolist() == bulk["label"].tolist()


def test_a_slower_change_driven_iteration_goes_back_to_bulk_and_is_remembered(monkeypatch):
    import itertools

    from onyx_rapids.algorithms import _propagate
    from onyx_rapids.algorithms._propagate import policies, steps
    # launched steps: a replayed step's first run and recording are not judged either
    monkeypatch.setattr(steps, "REPLAY", False)
    g = _path()
    sources = device.to_host(g.vertices)[[0]]
    # an iteration that builds a kernel is not judged: build them on a twin graph first
    personalized_pagerank(_path(), sources, alpha=0.5, change_driven="auto", fused=False)
    # every interval a little longer than the last (not twice as long: see judge)
    ticks = itertools.accumulate(1 + 1e-3 * i for i in itertools.count())
    monkeypatch.setattr(policies.time, "perf_counter", lambda: float(next(ticks)))
    first = personalized_pagerank(g, sources, alpha=0.5, change_driven="auto", fused=False,
                                  return_info=True)[1]
    one, slow = first.modes.index(CD), _propagate.SLOW_ITERATIONS
    assert first.modes[one:one + slow] == [CD] * slow  # three slow ones in a row: back to bulk
    assert first.modes[one + slow:] == [BULK] * (first.iterations - one - slow)
    assert first.converged
    assert _propagate.auto_memo(g, _share(), 1, "sources")["bulk only"] is True
    again = personalized_pagerank(g, sources, alpha=0.5, change_driven="auto",
                                  return_info=True)[1]  # the fused kernel no longer hands over
    assert again.modes == [BULK] * again.iterations and again.fused and again.converged
    # iterations that built their kernels (compiled at their first launch) are not timed
    from onyx_rapids import operators as ops
    ops.KERNEL_CACHE.clear()
    long = _path(40)  # the walk's front stays below pull_fraction of the edges longer
    built = personalized_pagerank(long, device.to_host(long.vertices)[[0]], alpha=0.5,
                                  change_driven="auto", fused=False, return_info=True)[1]
    memo = _propagate.auto_memo(long, _share(), 1, "sources")
    assert memo["bulk"][1] == built.modes.count(BULK) - 1  # the first bulk iteration compiled
    assert 0 < memo["change-driven"][1] < built.modes.count(CD)  # as did the first CD one


def test_judge_compares_mean_times_over_runs_and_a_fourfold_iteration_at_once():
    from onyx_rapids.algorithms._propagate import SLOW_ITERATIONS, judge, record_bulk
    memo = {}
    assert not judge(memo, 5.0)  # nothing to compare with yet
    record_bulk(memo, 2.0)
    record_bulk(memo, 4.0, iterations=2)  # bulk: 6 s over 3 iterations
    assert memo["bulk"] == (6.0, 3)
    # a pause in one iteration is outweighed by fast ones; the mean decides after a few
    verdicts = [judge(memo, t) for t in (5.0, 0.5, 0.5)]
    assert verdicts == [False] * SLOW_ITERATIONS and "bulk only" not in memo
    assert not judge(memo, 1.0) and judge(memo, 3.5)  # the mean: 7 / 4, then 10.5 / 5 > 2
    memo = {"bulk": (1.0, 1)}
    assert judge(memo, 4.5) and memo["bulk only"]  # four times a bulk iteration: at once


def test_judge_continuation_weighs_a_hand_over_against_as_many_bulk_iterations():
    from onyx_rapids.algorithms._propagate import judge_continuation, record_bulk
    memo = {}
    assert not judge_continuation(memo, 9.0, 3)  # no bulk time yet: nothing to compare with
    record_bulk(memo, 4.0, iterations=4)  # 1 s a bulk iteration
    assert not judge_continuation(memo, 3.0, 3) and "bulk only" not in memo  # as fast: keep
    assert judge_continuation(memo, 3.5, 3) and memo["bulk only"]  # slower: bulk from now on


def test_a_fused_run_whose_hand_over_costs_more_than_bulk_stays_bulk(monkeypatch):
    """The fused kernel hands over to change-driven iterations at the switch; when that
    continuation (its set-up, the switch, its iterations) took longer than as many bulk
    iterations, later runs on the graph stay in the fused kernel."""
    import itertools

    from onyx_rapids.algorithms import _propagate
    from onyx_rapids.algorithms._propagate import policies, steps
    monkeypatch.setattr(steps, "REPLAY", False)
    g = _path()
    sources = device.to_host(g.vertices)[[0]]
    personalized_pagerank(_path(), sources, alpha=0.5, change_driven="auto")  # build kernels
    # the iterations alone never look slow: only the whole continuation is judged here
    monkeypatch.setattr(policies, "judge", lambda memo, seconds: False)
    # a clock that reads a second later each time: a bulk iteration reads it twice, the
    # continuation many more times for its set-up and switch
    ticks = itertools.count()
    monkeypatch.setattr(policies.time, "perf_counter", lambda: float(next(ticks)))
    first, again = (personalized_pagerank(g, sources, alpha=0.5, change_driven="auto",
                                          return_info=True)[1] for _ in range(2))
    assert CD in first.modes and first.converged
    assert _propagate.auto_memo(g, _share(), 1, "sources")["bulk only"] is True
    assert again.modes == [BULK] * again.iterations and again.fused and again.converged


def test_runs_that_never_switch_stop_watching_and_then_run_the_bulk_iteration(monkeypatch):
    """After SELDOM_RUNS watched runs on a graph without a change-driven iteration, auto
    runs the bulk iteration itself (no mover counts); its result and modes are bulk's."""
    from onyx_rapids.algorithms import _propagate
    from onyx_rapids.algorithms._propagate import driver
    g = _path(6)
    seeds = pd.DataFrame({"vertex": [0, 5], "label": [0, 1]})
    runs = []
    real = driver.iterate

    def recording(run, policy, *a):
        runs.append(type(policy))
        return real(run, policy, *a)

    monkeypatch.setattr(driver, "iterate", recording)
    tol = 1e-4  # 13 iterations a run, not the default 1e-6's 20 (CI time)
    bulk = to_pandas(label_propagation(g, seeds, k=2, tol=tol))[["lp_0", "lp_1"]].to_numpy()
    runs.clear()
    infos = [label_propagation(g, seeds, k=2, tol=tol, change_driven="auto", pull_fraction=0.0,
                               return_info=True)[1] for _ in range(_propagate.SELDOM_RUNS)]
    assert all(CD not in i.modes for i in infos)
    memo = next(v for key, v in g._cache.items() if key[:2] == ("propagate", "auto"))
    assert memo["seldom"] == _propagate.SELDOM_RUNS and memo["bulk only"]
    df, info = label_propagation(g, seeds, k=2, tol=tol, change_driven="auto",
                                 return_info=True)
    assert runs[-1] is _propagate.Bulk  # the bulk run, not a watched one
    assert info.modes == [BULK] * info.iterations and info.variant["change_driven"] == "auto"
    assert np.abs(to_pandas(df)[["lp_0", "lp_1"]].to_numpy() - bulk).max() <= 1e-6


def test_seldom_counts_runs_with_few_change_driven_iterations():
    from onyx_rapids.algorithms._propagate import SELDOM_RUNS, seldom
    memo = {}
    assert not seldom(memo, 5, 20) and "seldom" not in memo  # a quarter: it may pay
    assert not seldom(memo, 0, 0)  # no iterations: nothing learnt
    verdicts = [seldom(memo, 3, 100) for _ in range(SELDOM_RUNS)]  # 3%: watching costs more
    assert verdicts == [False] * (SELDOM_RUNS - 1) + [True] and memo["bulk only"]


def test_pagerank_and_personalized_pagerank_learn_apart():
    """PageRank's uniform teleport and one source's move differently: what auto learnt of
    one on a graph does not make the other bulk."""
    from onyx_rapids.algorithms import _propagate
    g = _path()
    _propagate.auto_memo(g, _share(), 1, "uniform")["bulk only"] = True
    info = personalized_pagerank(g, device.to_host(g.vertices)[[0]], alpha=0.5,
                                 change_driven="auto", return_info=True)[1]
    assert CD in info.modes and info.converged  # (what it learns itself depends on timing)


def _share():
    from onyx_rapids.algorithms.pagerank import share
    return share


@pytest.mark.parametrize("mode", [True, "auto"])
def test_local_change_driven_steps_visit_only_what_the_push_reached(monkeypatch, mode):
    """PageRank on a graph without dangling vertices is local: after the first iteration a
    change-driven vertex step visits the vertices the push marked (the walk's front on a path,
    a few of n), and the ranks equal the non-local run's and the oracle's."""
    from onyx_rapids import frontier, operators as ops
    from onyx_rapids.algorithms._propagate import plan, policies, steps

    monkeypatch.setattr(steps, "REPLAY", False)  # every step launched: recorded here
    visits = []
    real = ops.vertexmap

    def recording(g, steps, args, **kw):
        bits = kw.get("active_in")
        visits.append(g.n if bits is None else frontier.count(bits))
        return real(g, steps, args, **kw)

    monkeypatch.setattr(policies.time, "perf_counter", lambda: 0.0)  # the guard never fires
    g = _path(24)
    src, dst = csr_edges(g)
    start = int(device.to_host(g.to_internal(np.array([0])))[0])
    expected = oracles.pagerank(g.n, src, dst, alpha=0.5, teleport=np.eye(g.n)[start])
    runs = {}
    for local in (True, False):
        monkeypatch.setattr(plan, "LOCAL", local)
        monkeypatch.setattr(ops, "vertexmap", recording)
        visits.clear()
        df, info = personalized_pagerank(g, device.to_host(g.vertices)[[0]], alpha=0.5,
                                         tol=1e-7, change_driven=mode, fused=False,
                                         pull_fraction=0.5, return_info=True)
        monkeypatch.setattr(ops, "vertexmap", real)
        assert info.converged and CD in info.modes
        runs[local] = (to_pandas(df)["ppr_0"].to_numpy(dtype=np.float64), info, list(visits))
    (got, info, seen), (other, info_all, seen_all) = runs[True], runs[False]
    assert np.abs(got - expected).sum() <= 1e-5
    np.testing.assert_allclose(got, other, rtol=0, atol=1e-7)
    assert info.modes == info_all.modes
    assert set(seen_all) == {g.n}  # the non-local steps visit every vertex
    # the walk's front: one more vertex a step (the first step of True visits all n)
    front = seen[1:] if mode is True else seen
    assert front[0] < 8 and all(b - a == 1 for a, b in zip(front, front[1:8])), seen


def test_pagerank_stop_test_in_the_kernel_counts_as_the_called_one():
    """Without dangling vertices PageRank's L1 test runs in the vertex kernel (pull); the
    folded push calls it on the rows: same iterations, same ranks."""
    g = _path(16)
    pulled = pagerank(g, alpha=0.6, tol=1e-5, fused=False, return_info=True)
    pushed = pagerank(g, alpha=0.6, tol=1e-5, fused=False, direction="push", fold=True,
                      return_info=True)
    assert pulled[1].converged and pushed[1].converged
    assert pulled[1].iterations == pushed[1].iterations > 3
    a, b = (to_pandas(df)["pagerank"].to_numpy() for df, _ in (pulled, pushed))
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-7)


def test_ppr_is_local_when_its_dangling_vertices_are_isolated_from_the_walk(monkeypatch):
    """Sources' teleports only: an isolated vertex (dangling, no in-edge, not a source) holds
    no mass, so the run is local; a sink the walk reaches, a uniform teleport or an isolated
    source are not.  Local or not, the ranks are the oracle's."""
    from onyx_rapids.algorithms import _propagate
    from onyx_rapids.algorithms._propagate import policies

    seen = []
    real = _propagate.propagate
    monkeypatch.setattr(policies.time, "perf_counter", lambda: 0.0)
    monkeypatch.setattr("onyx_rapids.algorithms.pagerank.propagate",
                        lambda *a, **kw: seen.append(kw.get("local", False)) or real(*a, **kw))
    n = 10
    path = pd.DataFrame({"src": np.arange(n - 1), "dst": np.arange(1, n)})
    isolated = Graph.from_edgelist(path, directed=False, vertices=np.arange(n + 1))
    sink = Graph.from_edgelist(pd.concat([path, pd.DataFrame({"src": [n - 1], "dst": [n]})]),
                               directed=True)
    cases = [(isolated, [0, 3], True), (isolated, [n], False), (sink, [0], False),
             (isolated, None, False)]  # None: PageRank's uniform teleport (tol 1e-5: L1 1e-4)
    for g, sources, local in cases:
        seen.clear()
        src, dst = csr_edges(g)
        if sources is None:
            df = pagerank(g, alpha=0.6, tol=1e-5, fused=False, change_driven=True)
            got = to_pandas(df)[["pagerank"]].to_numpy(dtype=np.float64)
            expected = oracles.pagerank(g.n, src, dst, alpha=0.6)[:, None]
        else:
            df = personalized_pagerank(g, sources, alpha=0.6, tol=1e-5, change_driven=True,
                                       fused=False)
            ids = device.to_host(g.to_internal(np.asarray(sources)))
            got = to_pandas(df)[[f"ppr_{i}" for i in range(len(sources))]].to_numpy(np.float64)
            expected = np.stack([oracles.pagerank(g.n, src, dst, alpha=0.6,
                                                  teleport=np.eye(g.n)[i])
                                 for i in ids], axis=1)
        assert seen == [local], sources
        assert np.abs(got - expected).sum(axis=0).max() <= 1e-4, sources


@pytest.mark.gpu
def test_local_steps_replayed_as_cuda_graphs_give_the_launched_results(monkeypatch):
    """On the GPU a local change-driven step is recorded once as a CUDA graph and replayed:
    the ranks are those of the launched steps, and replays happened."""
    from onyx_rapids.algorithms._propagate import steps

    side = 64  # a grid: the walk from a corner stays local for many steps
    ids = np.arange(side * side).reshape(side, side)
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    g = Graph.from_edgelist(pd.DataFrame({"src": src, "dst": dst}), directed=False)
    sources = [0, 2080]
    runs = {}
    for replay in (False, True):
        monkeypatch.setattr(steps, "REPLAY", replay)
        before = steps._Replay.replays
        runs[replay] = to_pandas(personalized_pagerank(g, sources, change_driven=True,
                                                       fused=False))
        assert (steps._Replay.replays > before) == replay
    cols = ["ppr_0", "ppr_1"]
    np.testing.assert_array_equal(runs[True][cols].to_numpy(), runs[False][cols].to_numpy())
