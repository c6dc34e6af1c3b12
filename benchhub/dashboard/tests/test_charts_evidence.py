"""Flame graphs from folded stacks (dashboard.charts_evidence): boxes, widths, the change."""

import pytest

from benchhub.dashboard.charts_evidence import flame_diff_figure, flame_figure

BEFORE = "main;work;lock 30\nmain;work;compute 70\n"
AFTER = "main;work;compute 90\nmain;idle 10\n"


def _boxes(figure: dict) -> dict[str, float]:
    trace = figure["data"][0]
    return dict(zip(trace["ids"], trace["values"], strict=True))


def test_it_sizes_each_frame_by_its_share_of_the_samples():
    figure = flame_figure(folded=BEFORE + "main;work;compute 100\n", title="t")

    assert figure is not None
    boxes = _boxes(figure)
    assert boxes["all;main;work;compute"] == pytest.approx(85.0)
    assert boxes["all;main;work"] == pytest.approx(100.0)
    parents = dict(zip(figure["data"][0]["ids"], figure["data"][0]["parents"], strict=True))
    assert parents["all;main;work;lock"] == "all;main;work"


def test_it_leaves_out_frames_below_the_minimum_share():
    figure = flame_figure(folded="main;hot 10000\nmain;rare 1\n", title="t")

    assert figure is not None
    assert "all;main;rare" not in _boxes(figure)


def test_it_has_no_flame_graph_without_a_sample():
    assert flame_figure(folded="", title="t") is None
    assert flame_diff_figure(before=BEFORE, after="", title="t") is None


def test_it_colours_the_differential_graph_by_the_change_in_share():
    figure = flame_diff_figure(before=BEFORE, after=AFTER, title="t")

    assert figure is not None
    trace = figure["data"][0]
    change = dict(zip(trace["ids"], trace["marker"]["colors"], strict=True))
    assert change["all;main;work;compute"] == pytest.approx(20.0)
    assert change["all;main;work;lock"] == pytest.approx(-30.0)
    assert change["all;main;idle"] == pytest.approx(10.0)
    assert _boxes(figure)["all;main;work;lock"] == pytest.approx(15.0)  # the mean of 30 and 0
    assert trace["marker"]["cmin"] == -trace["marker"]["cmax"]
