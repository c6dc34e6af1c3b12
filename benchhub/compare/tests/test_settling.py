"""What would settle an inconclusive level, and its time at the compared job's pace: through the
compare API against real PostgreSQL, and the pace of a job that interleaved its versions."""

import datetime as dt

import pytest

from benchhub.compare.settling import duration_text, measurement_seconds
from benchhub.compare.tests.uploads import upload
from benchhub.results.models import Run

URL = "/api/v1/compare/?workload=select-only&host=bench-01&versions=13.3,15.4"
START = "2026-11-20T10:00:00Z"


def _levels(body: dict) -> dict[int, dict]:
    return {level["clients"]: level for level in body["verdicts"][0]["levels"]}


def test_it_names_more_jobs_with_their_time_for_one_noisy_job_a_side(anon_client, agent):
    # 3 measurements of each version in 90 s: 30 s a measurement at this job's pace.
    end = "2026-11-20T10:01:30Z"
    upload(agent, version="13.3", tps={1: [100, 130, 80]}, started_at=START, finished_at=end)
    upload(agent, version="15.4", tps={1: [120, 90, 105]}, started_at=START, finished_at=end)
    level = _levels(anon_client.get(URL).json())[1]
    assert level["verdict_holm"] == "inconclusive"
    # 2 jobs x 3 repeats x 2 versions = 12 measurements of 30 s.
    assert level["settle_text"].startswith(
        "Settle it: 2 more jobs of 3 repeats a side, each a run of its own, about 6 min at "
        "this job's pace"
    )
    assert "on a quieter host" in level["settle_text"]


def test_it_says_nothing_of_settling_a_level_with_a_verdict(anon_client, agent):
    upload(agent, version="13.3", tps={1: [100, 101, 100]})
    upload(agent, version="15.4", tps={1: [150, 151, 150]})
    level = _levels(anon_client.get(URL).json())[1]
    assert (level["verdict_holm"], level["settle_text"]) == ("faster", "")


def test_it_names_the_repeats_pooled_runs_need_and_their_time(anon_client, agent):
    # Two runs a side: run means are the units, and more repeats narrow their interval.
    sides: list[tuple[int, list[float], list[float]]] = [
        (20, [100.0, 103.0], [103.0, 106.0]),
        (21, [102.0, 99.0], [101.0, 105.0]),
    ]
    for day, base, other in sides:
        start, end = f"2026-11-{day}T10:00:00Z", f"2026-11-{day}T10:01:00Z"
        upload(agent, version="13.3", tps={1: base}, started_at=start, finished_at=end)
        upload(agent, version="15.4", tps={1: other}, started_at=start, finished_at=end)
    level = _levels(anon_client.get(URL).json())[1]
    assert level["interval_unit"] == "run_means"
    assert level["verdict"] == "inconclusive" and level["repeats_needed"]
    needed = level["repeats_needed"]
    more = max(1, needed - 4)
    # 30 s a measurement (2 in 60 s), 2 versions.
    assert level["settle_text"].startswith(
        f"{needed} repeats a side ({more} more), {duration_text(more * 2 * 30.0)} at this "
        "job's pace"
    )


def test_it_asks_for_three_repeats_where_one_a_side_shows_no_variation(anon_client, agent):
    upload(
        agent, version="13.3", tps={1: [100]}, started_at=START, finished_at="2026-11-20T10:00:20Z"
    )
    upload(agent, version="15.4", tps={1: [110]})
    level = _levels(anon_client.get(URL).json())[1]
    assert level["settle_text"] == "3 repeats a side (2 more), about 80 s at this job's pace."


def test_it_paces_an_interleaved_job_by_every_version_it_measured():
    start = dt.datetime(2026, 11, 20, 10, tzinfo=dt.UTC)
    sequence = [[1, 1], [1, 2], [2, 1], [2, 2]]
    runs = [
        Run(
            job_id=7,
            started_at=start,
            finished_at=start + dt.timedelta(seconds=120),
            level_sequence=sequence,
            clients=[1, 2],
            repeats=2,
        ),
        Run(
            job_id=7,
            started_at=start + dt.timedelta(seconds=10),
            finished_at=start + dt.timedelta(seconds=120),
            level_sequence=sequence,
            clients=[1, 2],
            repeats=2,
        ),
        Run(
            job_id=8,
            started_at=start,
            finished_at=start + dt.timedelta(seconds=900),
            level_sequence=sequence,
            clients=[1, 2],
            repeats=2,
        ),
    ]
    # Both versions of job 7 took turns over its 120 s: 8 measurements, 15 s each.
    assert measurement_seconds(runs) == pytest.approx(15.0)
    assert measurement_seconds([runs[2]]) == pytest.approx(225.0)
    assert measurement_seconds([Run(job_id=None, started_at=start, finished_at=None)]) is None
