"""Staff manage hosts and runner tokens (the admin, `runner_create`, `runner_revoke`); nobody else
can, and there is no API that issues runner tokens."""

from django.test import Client

from benchhub.hosts.models import RunnerToken

TOKENS = "/admin/hosts/runnertoken/"


def test_it_keeps_people_who_are_not_staff_and_agents_out_of_the_token_admin(agent, bob):
    token = RunnerToken.objects.get()
    person = Client()
    person.force_login(bob)
    paths = [TOKENS, f"{TOKENS}{token.pk}/change/", "/admin/hosts/host/", "/admin/"]
    for path in paths:
        response = person.get(path)
        assert response.status_code == 302 and "/admin/login/" in response["Location"], path
        # An agent's bearer token means nothing to the admin: it signs people in by session.
        response = Client(HTTP_AUTHORIZATION=f"Bearer {agent.token}").get(path)
        assert response.status_code == 302 and "/admin/login/" in response["Location"], path
    revoke = {"action": "revoke", "_selected_action": [token.pk]}
    assert person.post(TOKENS, revoke).status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is None
    assert agent.client.post("/api/v1/jobs/claim/").status_code == 204


def test_it_refuses_an_agent_at_once_when_staff_revoke_its_token_in_the_admin(agent, alice):
    token = RunnerToken.objects.get()
    staff = Client()
    staff.force_login(alice)
    assert staff.get(TOKENS).status_code == 200
    assert agent.token not in staff.get(f"{TOKENS}{token.pk}/change/").text
    response = staff.post(TOKENS, {"action": "revoke", "_selected_action": [token.pk]})
    assert response.status_code == 302
    refused = agent.client.post("/api/v1/jobs/claim/")
    assert refused.status_code == 401 and "revoked" in refused.json()["detail"]


def test_it_issues_no_token_without_a_secret_in_the_admin(alice):
    staff = Client()
    staff.force_login(alice)
    # runner_create prints the secret once; an add form would store a token with none.
    assert staff.get(f"{TOKENS}add/").status_code == 403
    assert staff.get("/admin/accounts/personaltoken/add/").status_code == 403
