"""The host page: its run-to-run noise per workload and client level."""

import math

import numpy as np
import pytest

from benchhub.compare.tests.uploads import upload
from benchhub.stats.noise import HostNoise, detectable_difference


def test_it_shows_the_hosts_noise_per_workload_and_level(client, agent):
    # two runs of 14.23 (one group: the same build and key) and one of 15.4
    upload(agent, version="14.23", tps={4: [1000, 1030]}, started_at="2026-11-01T10:00:00Z")
    upload(agent, version="14.23", tps={4: [990, 1010]}, started_at="2026-11-02T10:00:00Z")
    upload(agent, version="15.4", tps={4: [1200, 1180, 1210], 8: [5000]})
    html = client.get("/hosts/bench-01/").content.decode()
    groups = [np.log([1000, 1030, 990, 1010]), np.log([1200, 1180, 1210])]
    squares = sum(float(((g - g.mean()) ** 2).sum()) for g in groups)
    cv = math.sqrt(squares / (3 + 2))
    visible = detectable_difference(noise=HostNoise(cv=cv, dof=5, groups=2), repeats=3)
    assert 'data-workload="select-only" data-clients="4"' in html
    assert f"{cv * 100:.1f}%" in html and f"{visible * 100:.1f}%" in html
    assert "7 repeats of 2 builds" in html
    assert 'data-clients="8"' not in html  # one repeat: no variation to measure
    assert "are not reliably visible with 3 repeats a side" in html


def test_it_answers_404_for_an_unknown_host(client, db):
    assert client.get("/hosts/nowhere/").status_code == 404


@pytest.mark.parametrize("path", ["/docs/statistics/"])
def test_it_serves_the_method_the_compare_page_links_to(client, db, path):
    html = client.get(path).content.decode()
    assert "Statistics: verdicts, host noise, change points" in html
    assert "<table>" in html and "<script" not in html
