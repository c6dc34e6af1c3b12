"""A repeat whose throughput moved inside its run (a trend or a level shift in its per-second
progress) is flagged at aggregation, and no verdict is called at its level until a reviewer
marks the run explained."""

import numpy as np
import pytest

from benchhub.compare.tests.uploads import upload_seconds
from benchhub.hosts.access import HostForbidden
from benchhub.results.models import Result
from benchhub.review.services import ReviewInvalid, run_mark

URL = "/api/v1/compare/?workload=select-only&host=bench-01&versions=13.3,15.4"
SECONDS = 120


def steady(level: float, *, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    return [round(float(v), 2) for v in level * (1 + rng.normal(0, 0.01, SECONDS))]


def falling(start: float, end: float, *, seed: int) -> list[float]:
    """Per-second tps falling in a straight line from `start` to `end`, with 1% noise."""
    rng = np.random.default_rng(seed)
    line = np.linspace(start, end, SECONDS)
    return [round(float(v), 2) for v in line * (1 + rng.normal(0, 0.01, SECONDS))]


def shifted(before: float, after: float, *, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    level = np.where(np.arange(SECONDS) < 70, before, after)
    return [round(float(v), 2) for v in level * (1 + rng.normal(0, 0.01, SECONDS))]


@pytest.fixture
def baseline(agent):
    return upload_seconds(
        agent, version="13.3", seconds={4: [steady(1000, seed=s) for s in (1, 2, 3)]}
    )


def _level(client, clients: int = 4) -> dict:
    body = client.get(URL).json()
    (version,) = body["verdicts"]
    return {level["clients"]: level for level in version["levels"]}[clients] | {
        "unsteady_clients": version["unsteady_clients"]
    }


def test_it_calls_a_steady_run_faster_and_flags_nothing(anon_client, agent, baseline):
    run = upload_seconds(
        agent, version="15.4", seconds={4: [steady(1100, seed=s) for s in (4, 5, 6)]}
    )
    assert set(
        Result.objects.filter(run__in=[run, baseline]).values_list("unsteady", flat=True)
    ) == {""}
    level = _level(anon_client)
    assert level["verdict"] == "faster" and level["unsteady"] is False
    assert level["unsteady_clients"] == []


def test_it_flags_a_falling_run_and_calls_no_verdict_at_its_level(anon_client, agent, baseline):
    # Its mean is 10% over the baseline, as the steady run's above, but it fell 30% inside.
    seconds = [steady(1100, seed=4), falling(1265, 935, seed=5), steady(1100, seed=6)]
    run = upload_seconds(agent, version="15.4", seconds={4: seconds})
    flagged = Result.objects.get(run=run, repeat=2)
    assert flagged.unsteady.startswith("tps fell") and "trend" in flagged.unsteady
    assert flagged.unsteady_change == pytest.approx(-0.26, abs=0.06)
    assert not Result.objects.get(run=run, repeat=1).unsteady
    level = _level(anon_client)
    assert level["verdict"] == "inconclusive" and level["verdict_holm"] == "inconclusive"
    assert level["unsteady"] is True and level["unsteady_clients"] == [4]
    assert "drifted inside a run" in level["description"]
    detail = anon_client.get(f"/api/v1/runs/{run.uuid}/").json()
    assert detail["unsteady_explained"] is False
    results = anon_client.get(f"/api/v1/runs/{run.uuid}/results/").json()
    repeats = {r["repeat"]: r for r in results}
    assert repeats[2]["unsteady"] == flagged.unsteady and repeats[1]["unsteady"] == ""
    page = anon_client.get(URL.replace("/api/v1", "")).content.decode()
    assert page.count("throughput drifted inside the run</span>") == 1
    run_page = anon_client.get(f"/runs/{run.uuid}/").content.decode()
    assert flagged.unsteady in run_page and "until a reviewer marks the run explained" in run_page


def test_it_flags_a_level_shift_inside_the_run(agent, baseline):
    run = upload_seconds(agent, version="15.4", seconds={4: [shifted(1000, 850, seed=7)]})
    flagged = Result.objects.get(run=run)
    assert "level shift" in flagged.unsteady and flagged.unsteady_change < -0.1


def test_it_calls_the_verdict_again_once_a_reviewer_explains_the_run(
    anon_client, agent, baseline, bob, mallory
):
    seconds = [steady(1100, seed=4), falling(1265, 935, seed=5), steady(1100, seed=6)]
    run = upload_seconds(agent, version="15.4", seconds={4: seconds})
    with pytest.raises(ReviewInvalid) as refused:
        run_mark(run=run, unsteady_explained=True, actor=bob)
    assert refused.value.field == "reason"
    with pytest.raises(HostForbidden):
        run_mark(run=run, unsteady_explained=True, actor=mallory, reason="vacuum")
    assert _level(anon_client)["verdict"] == "inconclusive"
    run_mark(
        run=run,
        unsteady_explained=True,
        actor=bob,
        reason="autovacuum of a table the workload does not read ran during repeat 2",
    )
    level = _level(anon_client)
    assert level["verdict"] == "faster" and level["unsteady"] is False
    assert anon_client.get(f"/api/v1/runs/{run.uuid}/").json()["unsteady_explained"] is True
