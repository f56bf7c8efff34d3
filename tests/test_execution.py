"""Execution options and the registry: validated once, refused in one place, complete."""

import inspect
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import onyx_rapids as onyx
from onyx_rapids import Execution, registry

EXPECTED = {"pagerank", "personalized_pagerank", "label_propagation", "feature_propagation",
            "als", "belief_propagation", "multi_manifold_ranking", "multimodal_learning", "bfs",
            "sssp", "weakly_connected_components", "core_number", "k_core",
            "minimum_spanning_tree", "strongly_connected_components", "betweenness_centrality",
            "edge_betweenness_centrality"}


def _path():
    return onyx.Graph.from_edgelist(pd.DataFrame({"src": [0, 1, 2], "dst": [1, 2, 3]}),
                                    directed=True)


def test_every_public_algorithm_is_registered_with_its_function():
    assert set(onyx.ALGORITHMS) == EXPECTED
    for name, spec in onyx.ALGORITHMS.items():
        assert getattr(onyx, name) is spec.function
        assert spec.function.spec is spec
        params = inspect.signature(spec.function).parameters
        for item in spec.inputs:  # every declared input is a parameter of the function
            assert item.name in params, (name, item.name)
        assert spec.columns[0] in ("vertex", "side", "src") and spec.options is not None


@pytest.mark.parametrize("options, match", [
    (dict(direction="sideways"), "direction must be one of"),
    (dict(feature_aware=1), "feature_aware must be True or False"),
    (dict(pull_fraction=1.5), r"pull_fraction must be a number in \[0, 1\]"),
    (dict(block_size=48), "block_size must be None or a multiple of 32"),
    (dict(filter="fast"), "filter must be one of"),
    (dict(threshold=0), "threshold"),
    (dict(edge_access="sideways"), "edge_access must be one of"),
    (dict(tuning="fast"), "tuning must be None, .auto., .search."),
])
def test_execution_validates_each_option_once(options, match):
    with pytest.raises(ValueError, match=match):
        Execution(**options)
    with pytest.raises(ValueError, match=match):  # the keyword path goes through it too
        onyx.pagerank(_path(), **options)


def test_replace_and_unknown_option():
    e = Execution(change_driven=True)
    assert e.replace(fold=True) == Execution(change_driven=True, fold=True)
    assert e.changed() == {"change_driven": True}
    with pytest.raises(TypeError, match="unknown execution option"):
        e.replace(speed="max")
    with pytest.raises(TypeError, match="must be an onyx_rapids.Execution"):
        onyx.pagerank(_path(), execution={"change_driven": True})


def test_unsupported_options_and_combinations_share_one_message():
    g = _path()
    cases = [
        (lambda: onyx.core_number(g, change_driven=True), "core_number does not support "
                                                          "change_driven=True"),
        (lambda: onyx.feature_propagation(g, np.ones((g.n, 1), np.float32),
                                          change_driven=True),
         "feature_propagation does not support change_driven=True"),
        (lambda: onyx.pagerank(g, fused=True, change_driven=True),
         "pagerank does not support fused=True with change_driven=True"),
        (lambda: onyx.feature_propagation(g, np.ones((g.n, 1), np.float32),
                                          direction="push"),
         "feature_propagation does not support fold=True with direction='push'"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()


def test_keywords_override_the_execution_object():
    g = _path()
    _, info = onyx.pagerank(g, execution=Execution(change_driven=True), change_driven=False,
                            fused=False, return_info=True)
    assert info.change_driven is False and info["change_driven"] is False


def test_variants_are_the_supported_matrix():
    pr = registry.get("pagerank").variants()
    assert {"feature_aware": False, "change_driven": True, "fold": True,
            "direction": "push", "fused": False} in pr
    assert not any(v.get("fused") and v["change_driven"] for v in pr)  # refused combination
    fp = registry.get("feature_propagation").variants()
    assert all(not (v["fold"] and v["direction"] == "push") for v in fp)
    assert all("change_driven" not in v for v in fp)
    with pytest.raises(ValueError, match="unknown algorithm 'pagerang'; the algorithms are"):
        registry.get("pagerang")


def test_run_info_is_a_mapping_that_survives_merge():
    g = _path()
    df, info = onyx.pagerank(g, return_info=True)
    assert isinstance(info, onyx.RunInfo)
    assert info.iterations == info["iterations"] == dict(info)["iterations"] > 0
    merged = df.merge(df, on="vertex")
    assert info.converged and merged.shape[0] == g.n  # the info stays with the caller


def _support_table():
    """docs/execution.md's table of which algorithm supports which option: {algorithm:
    {column: cell}}, a column naming one option or several (``filter, threshold``)."""
    path = Path(__file__).resolve().parents[1] / "docs" / "execution.md"
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| algorithm |"))
    header = [c.strip() for c in lines[start].strip("|").split("|")]
    table = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert len(cells) == len(header), line
        table[cells[0]] = dict(zip(header[1:], cells[1:]))
    return table


def test_the_support_table_of_the_docs_is_the_registry(capsys):
    """Every row of docs/execution.md's support table against ``onyx-rapids list --json``: the
    same algorithms; a cell is "-" exactly where the option is not supported; change_driven
    names "auto" exactly where the algorithm takes it."""
    from onyx_rapids import cli

    assert cli.main(["list", "--json"]) == 0
    listed = {a["name"]: a["options"] for a in json.loads(capsys.readouterr().out)}
    table = _support_table()
    assert set(table) == set(listed)
    wrong = []
    for name, cells in table.items():
        for column, cell in cells.items():
            for option in (o.strip() for o in column.split(",")):
                supported = option in listed[name]
                if supported == cell.startswith("-"):
                    wrong.append(f"{name} {option}: the docs say {cell!r}, the registry "
                                 f"{'supports' if supported else 'does not support'} it")
        legal = listed[name].get("change_driven", ())
        takes_auto = "change_driven" in listed[name] and (legal is None or "auto" in legal)
        if takes_auto != ('"auto"' in cells["change_driven"]):
            wrong.append(f"{name} change_driven: the docs say {cells['change_driven']!r}, the "
                         f"registry's values are {legal}")
    assert not wrong, "\n".join(wrong)
