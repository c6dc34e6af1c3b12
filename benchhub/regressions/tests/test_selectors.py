"""The regression reads make a fixed number of queries, however many rows there are."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchhub.compare.tests.uploads import upload
from benchhub.regressions.models import Regression


def _more(agent, regression: Regression, count: int) -> None:
    for i in range(count):
        run = upload(
            agent, version=f"14.{i + 3}", tps={4: [700.0]}, started_at=f"2026-10-{i + 3:02d}T10:00Z"
        )
        Regression.objects.create(
            **{
                f.attname: getattr(regression, f.attname)
                for f in Regression._meta.concrete_fields
                if f.attname not in ("id", "run_after_id")
            },
            run_after=run,
        )


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured.captured_queries)


def test_it_reads_the_lists_in_a_fixed_number_of_queries(client, agent, alice, regression):
    client.force_login(alice)
    urls = [
        "/api/v1/regressions/",
        f"/api/v1/regressions/{regression.pk}/",
        "/regressions/",
        f"/regressions/{regression.pk}/",
        "/history/?host=bench-01&workload=select-only&clients=4",
    ]
    few = [_queries(client, url) for url in urls]
    _more(agent, regression, 3)
    assert Regression.objects.count() == 4
    assert [_queries(client, url) for url in urls] == few
