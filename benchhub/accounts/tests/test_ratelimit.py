"""Failed sign-ins and failed bearer tokens are rate-limited, in the real Redis."""

import redis
from django.test import Client
from rest_framework.test import APIClient

from benchhub.accounts import ratelimit
from benchhub.hosts.services import runner_tokens_revoke


def bearer(token: str, ip: str = "10.0.0.1") -> APIClient:
    client = APIClient(REMOTE_ADDR=ip)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def sign_in(username: str, password: str, ip: str = "10.0.0.1", path: str = "/accounts/login/"):
    return Client(REMOTE_ADDR=ip).post(path, {"username": username, "password": password})


def test_it_keeps_the_counters_in_redis(settings, db):
    prefix = settings.CACHES["default"]["KEY_PREFIX"]
    assert bearer("bhr_garbage").get("/api/v1/runs/").status_code == 401
    keys = redis.Redis.from_url(settings.REDIS_URL).keys(f"{prefix}:*:ratelimit:token-ip:*")
    assert len(keys) == 1 and keys[0].decode().endswith(":10.0.0.1")


def test_it_answers_429_with_retry_after_past_the_token_limit(settings, agent):
    settings.RATELIMIT_TOKEN_IP = 3
    for _ in range(3):
        assert bearer("bhr_nothing_" + "A" * 43).get("/api/v1/runs/").status_code == 401
    refused = bearer("bhr_garbage").get("/api/v1/runs/")
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= settings.RATELIMIT_WINDOW_S
    body = refused.json()
    assert body["error"] == "throttled" and "Too many failed token attempts" in body["detail"]
    # A real token from the same address is not held up: successes are never counted or checked.
    assert bearer(agent.token).post("/api/v1/jobs/claim/").status_code == 204
    # Another address has its own allowance.
    assert bearer("bhr_garbage", ip="10.0.0.2").get("/api/v1/runs/").status_code == 401


def test_it_refuses_a_revoked_token_plainly_and_does_not_count_it(settings, agent):
    settings.RATELIMIT_TOKEN_IP = 2
    runner_tokens_revoke(host_name="bench-01")
    for _ in range(4):
        response = bearer(agent.token).post("/api/v1/jobs/claim/")
        assert response.status_code == 401 and "revoked" in response.json()["detail"]


def test_it_refuses_a_username_from_an_address_after_its_failures_even_with_the_right_password(
    settings, bob
):
    settings.RATELIMIT_LOGIN_USER = 3
    for _ in range(3):
        assert "Please enter a correct username" in sign_in("bob", "wrong", "10.0.0.1").text
    refused = sign_in("bob", "bob-pass-1", "10.0.0.1")
    assert refused.status_code == 200 and "_auth_user_id" not in refused.client.session
    assert "Too many failed sign-ins" in refused.text
    # Usernames are counted case-insensitively, so BOB is the same guesser.
    assert "Too many failed sign-ins" in sign_in("BOB", "wrong", "10.0.0.1").text


def test_it_never_locks_an_account_out_for_its_owner_elsewhere(settings, bob):
    """The lockout attack: failing bob's sign-in from many addresses does not stop bob."""
    settings.RATELIMIT_LOGIN_USER = 3
    for ip in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):
        for _ in range(4):
            sign_in("bob", "wrong", ip)
    signed_in = sign_in("bob", "bob-pass-1", "10.0.0.4")
    assert signed_in.status_code == 302 and signed_in.client.session["_auth_user_id"]


def test_it_refuses_an_address_after_its_failed_sign_ins(settings, bob, alice):
    settings.RATELIMIT_LOGIN_IP = 3
    for name in ("carol", "dave", "erin"):
        assert "Please enter a correct username" in sign_in(name, "x").text
    assert "Too many failed sign-ins" in sign_in("bob", "bob-pass-1").text
    assert "Too many failed sign-ins" in sign_in("alice", "alice-pass-1", path="/admin/login/").text
    # Someone else, elsewhere, signs in as usual.
    signed_in = sign_in("bob", "bob-pass-1", ip="10.0.0.9")
    assert signed_in.status_code == 302 and signed_in.client.session["_auth_user_id"]


def test_it_clears_the_username_count_on_a_successful_sign_in(settings, bob):
    settings.RATELIMIT_LOGIN_USER = 3
    for _ in range(2):
        sign_in("bob", "wrong")
    assert sign_in("bob", "bob-pass-1").status_code == 302
    for _ in range(2):
        assert "Please enter a correct username" in sign_in("bob", "wrong").text
    assert sign_in("bob", "bob-pass-1").status_code == 302


def test_it_counts_failures_of_the_admin_sign_in_too(settings, alice):
    settings.RATELIMIT_LOGIN_USER = 2
    for _ in range(2):
        sign_in("alice", "wrong", path="/admin/login/")
    refused = sign_in("alice", "alice-pass-1", path="/admin/login/")
    assert "Too many failed sign-ins" in refused.text


def test_it_takes_the_client_address_behind_trusted_proxies_only(settings, rf):
    request = rf.get("/", REMOTE_ADDR="10.1.1.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.7")
    assert ratelimit.client_ip(request) == "10.1.1.1"
    settings.BENCHHUB_PROXY_HOPS = 1
    # The rightmost entry is what our proxy saw; the client may have written anything before it.
    assert ratelimit.client_ip(request) == "203.0.113.7"
