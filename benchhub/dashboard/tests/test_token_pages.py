"""The Tokens page: a signed-in person makes a personal token (shown once, stored as a digest),
lists their own tokens and revokes one; nobody sees or revokes another's."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from benchhub.accounts.models import PersonalToken
from benchhub.accounts.tokens import token_digest

PAGE = "/account/tokens/"


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def create(client: Client, **fields) -> tuple[PersonalToken, str]:
    data = {"name": "laptop", "scopes": ["read", "queue"], "days": "30", **fields}
    response = client.post(PAGE, data)
    assert response.status_code == 201, response.content
    secret = response.context["secret"]
    return PersonalToken.objects.get(prefix=secret.split("_")[1]), secret


def api_status(secret: str) -> int:
    script = APIClient()
    script.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return script.get("/api/v1/status/").status_code


def test_it_shows_a_new_token_once_and_stores_only_its_digest(alice):
    client = signed_in(alice)
    token, secret = create(client)
    assert secret.startswith(f"bhp_{token.prefix}_")
    assert token.user == alice and token.name == "laptop"
    assert token.scopes == ["queue", "read"]
    assert token.digest == token_digest(secret) and secret not in str(vars(token))
    assert abs(token.expires_at - (timezone.now() + timedelta(days=30))) < timedelta(minutes=1)
    assert api_status(secret) == 200

    again = client.get(PAGE)
    html = again.content.decode()
    assert again.status_code == 200 and secret not in html
    assert "laptop" in html and f"bhp_{token.prefix}_" in html and "queue, read" in html


def row_of(client: Client, token: PersonalToken) -> str:
    page = client.get(PAGE).content.decode()
    return page.split(f'data-prefix="{token.prefix}"')[1].split("</tr>")[0]


def test_it_lists_when_a_token_was_last_used(alice):
    client = signed_in(alice)
    token, secret = create(client)
    assert "<td>never</td>" in row_of(client, token)
    assert api_status(secret) == 200
    assert "<td>never</td>" not in row_of(client, token) and "ago</time>" in row_of(client, token)


def test_it_refuses_a_token_without_a_name_or_a_scope_and_makes_nothing(alice):
    client = signed_in(alice)
    response = client.post(PAGE, {"name": "", "days": "30"})
    assert response.status_code == 400
    assert set(response.context["form"].errors) == {"name", "scopes"}
    assert "Choose at least one scope." in response.content.decode()
    too_long = client.post(PAGE, {"name": "x", "scopes": ["read"], "days": "4000"})
    assert too_long.status_code == 400 and "days" in too_long.context["form"].errors
    assert not PersonalToken.objects.exists()


def test_it_revokes_a_token_and_the_api_refuses_it_after(alice):
    client = signed_in(alice)
    token, secret = create(client)
    response = client.post(f"{PAGE}{token.prefix}/revoke/")
    assert response.status_code == 302 and response["Location"] == PAGE
    assert api_status(secret) == 401
    row = row_of(client, token)
    assert "revoked" in row and "revoke/" not in row


def test_it_keeps_alices_tokens_from_bob(alice, bob):
    token, secret = create(signed_in(alice), name="alice-ci")
    bobs = signed_in(bob)
    page = bobs.get(PAGE).content.decode()
    assert "alice-ci" not in page and token.prefix not in page
    assert bobs.post(f"{PAGE}{token.prefix}/revoke/").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None and api_status(secret) == 200


def test_it_sends_anonymous_visitors_to_sign_in(db):
    for method, path in (("get", PAGE), ("post", PAGE), ("post", f"{PAGE}abcd1234/revoke/")):
        response = getattr(Client(), method)(path, {"name": "x", "scopes": ["read"]})
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert not PersonalToken.objects.exists()


@pytest.mark.parametrize("path", ["/", "/runs/"])
def test_it_links_the_tokens_page_from_the_menu_once_signed_in(path, bob):
    assert f'href="{PAGE}"' in signed_in(bob).get(path).content.decode()
    assert f'href="{PAGE}"' not in Client().get(path).content.decode()
