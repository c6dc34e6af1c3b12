"""Triage through the API and the pages: who may change a state, the log, the filters."""

import json

import pytest
from django.contrib.auth.models import Permission

from benchhub.regressions.models import Regression, RegressionEvent


def test_it_changes_a_state_with_a_note_and_logs_who_did(alice_client, alice, regression):
    response = alice_client.post(
        f"/api/v1/regressions/{regression.pk}/state/",
        {"state": "investigating", "note": "bisecting 14.1..14.2"},
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["state"] == "investigating" and body["note"] == "bisecting 14.1..14.2"
    assert body["state_changed_by"] == "alice"
    assert [(e["from_state"], e["to_state"], e["actor"]) for e in body["events"]] == [
        ("new", "investigating", "alice")
    ]
    regression.refresh_from_db()
    assert regression.state == "investigating" and regression.state_changed_by == alice
    detail = alice_client.get(f"/api/v1/regressions/{regression.pk}/").json()
    assert detail["events"][0]["note"] == "bisecting 14.1..14.2"
    assert detail["run_after"]["version"] == "14.2"


def test_it_refuses_a_reader_without_the_right_to_triage(bob_client, regression):
    response = bob_client.post(
        f"/api/v1/regressions/{regression.pk}/state/", {"state": "accepted"}, format="json"
    )
    assert response.status_code == 403 and response.json()["error"] == "forbidden"
    regression.refresh_from_db()
    assert regression.state == "new" and not RegressionEvent.objects.exists()


def test_it_lets_a_person_given_the_permission_triage(bob_client, bob, regression):
    bob.user_permissions.add(Permission.objects.get(codename="change_regression"))
    response = bob_client.post(
        f"/api/v1/regressions/{regression.pk}/state/", {"state": "false_positive"}, format="json"
    )
    assert response.status_code == 200
    assert Regression.objects.get().state == "false_positive"


def test_it_refuses_anonymous_triage(anon_client, regression):
    response = anon_client.post(
        f"/api/v1/regressions/{regression.pk}/state/", {"state": "fixed"}, format="json"
    )
    assert response.status_code in (401, 403)
    assert Regression.objects.get().state == "new"


@pytest.mark.parametrize(
    ("body", "field"),
    [({"state": "gone"}, "state"), ({}, "state"), ({"state": "fixed", "note": 5}, "note")],
)
def test_it_names_the_bad_field_of_a_state_change(alice_client, regression, body, field):
    response = alice_client.post(f"/api/v1/regressions/{regression.pk}/state/", body, format="json")
    assert response.status_code == 400
    assert field in response.json()["fields"]
    assert Regression.objects.get().state == "new" and not RegressionEvent.objects.exists()


def test_it_lists_and_filters_regressions(anon_client, regression, alice):
    listed = anon_client.get("/api/v1/regressions/").json()["results"]
    assert [r["id"] for r in listed] == [regression.pk]
    assert listed[0]["change_low"] == -0.21 and listed[0]["host"] == "bench-01"
    for query, count in [
        ("state=new", 1),
        ("state=fixed", 0),
        ("host=bench-01", 1),
        ("host=bench-09", 0),
        ("workload=select-only&clients=4", 1),
        ("kind=improvement", 0),
    ]:
        results = anon_client.get(f"/api/v1/regressions/?{query}").json()["results"]
        assert len(results) == count, query
    bad = anon_client.get("/api/v1/regressions/?state=gone")
    assert bad.status_code == 400 and "state" in bad.json()["fields"]
    assert anon_client.get("/api/v1/regressions/999999/").status_code == 404


def test_it_shows_the_triage_page_and_changes_state_from_it(client, alice, regression):
    page = client.get("/regressions/?state=new").content.decode()
    assert f'data-regression="{regression.pk}"' in page and "-20.0%" in page
    assert "95% interval -21.0% to -19.0%" in page
    assert 'data-regression="' not in client.get("/regressions/?state=fixed").content.decode()
    assert client.get("/regressions/?state=gone").status_code == 400

    detail = client.get(f"/regressions/{regression.pk}/").content.decode()
    assert 'id="regression-triage"' not in detail  # anonymous: no form
    client.force_login(alice)
    assert 'id="regression-triage"' in client.get(f"/regressions/{regression.pk}/").content.decode()
    response = client.post(
        f"/regressions/{regression.pk}/state/", {"state": "accepted", "note": "<b>known</b>"}
    )
    assert response.status_code == 302
    detail = client.get(f"/regressions/{regression.pk}/").content.decode()
    assert "&lt;b&gt;known&lt;/b&gt;" in detail and "<b>known</b>" not in detail
    assert Regression.objects.get().state == "accepted"


def test_it_marks_detected_changes_on_the_history_chart(client, regression):
    html = client.get("/history/?host=bench-01&workload=select-only&clients=4").content.decode()
    start = html.index('id="history-figure"')
    figure = json.loads(html[html.index(">", start) + 1 : html.index("</script>", start)])
    shapes = figure["layout"]["shapes"]
    assert [s["x0"] for s in shapes] == [regression.run_after.started_at.isoformat()]
    assert figure["layout"]["annotations"][0]["text"] == "-20.0% (new)"
    assert f'href="/regressions/{regression.pk}/"' in html


def test_it_shows_regressions_in_the_admin_but_changes_them_only_through_triage(
    client, alice, regression
):
    client.force_login(alice)
    for url in (
        "/admin/regressions/regression/",
        f"/admin/regressions/regression/{regression.pk}/change/",
    ):
        assert client.get(url).status_code == 200, url
    response = client.post(
        f"/admin/regressions/regression/{regression.pk}/change/", {"state": "fixed"}
    )
    assert response.status_code == 403
    assert Regression.objects.get().state == "new"
