import csv
import io
import math

import numpy as np
import pytest
from scipy.stats import ttest_ind

from benchhub.compare.tests.uploads import upload
from benchhub.results.models import LevelAggregate, Run

URL = "/api/v1/compare/?workload=select-only&host=bench-01&versions=13.3,15.4"


@pytest.fixture
def two_versions(agent):
    base = upload(agent, version="13.3", tps={1: [100, 110], 4: [400, 420]})
    new = upload(agent, version="15.4", tps={1: [200, 210], 4: [405, 430]}, source="summary")
    return base, new


def test_it_answers_with_the_stored_medians_and_changes(anon_client, two_versions):
    body = anon_client.get(URL).json()
    assert [s["label"] for s in body["series"]] == ["13.3", "15.4 (summary import)"]
    rows = {r["clients"]: r["versions"] for r in body["rows"]}
    assert rows[1][0]["tps"] == pytest.approx(105)
    assert rows[1][1]["tps"] == pytest.approx(205)
    # the change is the verdict's: of the repeats' geometric means, not of the medians above
    ratio = math.sqrt(200 * 210 / (100 * 110))
    assert rows[1][1]["change_pct"] == pytest.approx(100 * (ratio - 1))
    assert rows[1][1]["verdict"] == "faster"
    assert rows[4][1]["verdict"] == "inconclusive"
    assert rows[1][0]["verdict"] is None  # the baseline
    levels = {v["clients"]: v for v in body["verdicts"][0]["levels"]}
    # two repeats a side of pgbench's own tps (2 progress seconds each): Student's t on logs
    test = ttest_ind(np.log([200, 210]), np.log([100, 110]))
    low, high = np.exp(test.confidence_interval(0.95))
    assert levels[1]["tps_ratio"] == pytest.approx(math.sqrt(200 * 210 / (100 * 110)))
    assert (levels[1]["tps_ratio_low"], levels[1]["tps_ratio_high"]) == pytest.approx((low, high))
    assert levels[4]["repeats"] == [2, 2] and levels[4]["mann_whitney_p"] is None
    verdict = body["verdicts"][0]
    assert verdict["summary"].startswith("15.4 against 13.3: faster at 1")
    # A level is faster after Holm over both levels and the geometric mean, so the curve is
    # called different; the mean's own verdict is the one its sentence states.
    assert verdict["called_different"] is True
    assert f"; {verdict['geomean_verdict']} over the curve: geometric-mean" in verdict["summary"]
    assert verdict["geomean_ratio"] == pytest.approx(
        math.sqrt(levels[1]["tps_ratio"] * levels[4]["tps_ratio"])
    )
    assert body["threshold_pct"] == 2 and body["aa"] is False
    assert body["summary"][1]["peak_clients"] == 4
    assert body["differences"][0]["name"] == "source"


def test_it_gives_the_table_as_csv_matching_the_stored_aggregates(anon_client, two_versions):
    for response in (
        anon_client.get(URL + "&format=csv"),
        anon_client.get(URL, HTTP_ACCEPT="text/csv"),
    ):
        assert response.status_code == 200
        assert response["Content-Type"].startswith("text/csv")
        lines = list(csv.DictReader(io.StringIO(response.content.decode())))
        assert len(lines) == 4
        for line in lines:
            stored = LevelAggregate.objects.get(run__uuid=line["run"], clients=line["clients"])
            assert float(line["tps_median"]) == pytest.approx(stored.tps_median)
            assert float(line["tps_min"]) == pytest.approx(stored.tps_min)
            assert float(line["tps_max"]) == pytest.approx(stored.tps_max)
        assert lines[1]["version"] == "15.4" and lines[1]["source"] == "summary"


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ("?workload=select-only&host=bench-01", "versions"),
        ("?host=bench-01&versions=13.3", "workload"),
        ("?runs=not-a-uuid", "runs"),
        ("?workload=select-only&host=nowhere&versions=13.3", "host"),
        ("?workload=select-only&host=bench-01&versions=13.3&invalid=maybe", "invalid"),
        ("?workload=select-only&host=bench-01&versions=13.3&why=none", "why"),
    ],
)
def test_it_names_the_bad_parameter(anon_client, agent, query, parameter):
    response = anon_client.get("/api/v1/compare/" + query)
    assert response.status_code == 400
    assert parameter in response.json()["fields"]


def test_it_makes_a_fixed_number_of_queries(anon_client, agent, django_assert_num_queries):
    upload(agent, version="13.3", tps={1: [100], 2: [150]})
    upload(agent, version="15.4", tps={1: [100], 2: [150]})
    # the state of the runs it comes from (the cache's key), then on a miss the comparison's
    # seven, the why section's two, and the sets' latency percentiles' one
    with django_assert_num_queries(1 + 7 + 2 + 1):
        assert anon_client.get(URL).status_code == 200
    with django_assert_num_queries(1):
        assert anon_client.get(URL).status_code == 200
    for day in range(1, 10):
        for version in ("13.3", "15.4"):
            upload(agent, version=version, tps={1: [100]}, started_at=f"2026-10-{day:02d}T10:00Z")
    assert Run.objects.count() == 20
    with django_assert_num_queries(1 + 7 + 2 + 1):
        assert anon_client.get(URL).status_code == 200
    with django_assert_num_queries(1):
        assert anon_client.get(URL).status_code == 200
