"""The Tokens page in a real browser, and its token in the real `benchhub` command: a person
makes a token on the page, copies it once, logs the command in with it; after "revoke" on the
page the command is refused."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from benchhub.testing.browser import screenshot, sign_in

BENCHHUB = str(Path(sys.executable).parent / "benchhub")


def benchhub(*argv: str, home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHHUB_")}
    env["XDG_CONFIG_HOME"] = str(home)
    return subprocess.run(
        [BENCHHUB, *argv, "--retries", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.django_db(transaction=True)
def test_it_makes_a_token_the_command_uses_until_it_is_revoked(live_server, page, alice, tmp_path):
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    sign_in(page, live_server.url, "alice", "alice-pass-1")
    page.goto(f"{live_server.url}/")
    page.click("#nav-tokens")
    expect(page).to_have_url(f"{live_server.url}/account/tokens/")
    expect(page.locator("#tokens-table")).to_contain_text("No tokens yet.")

    page.fill("#id_name", "laptop")
    page.check("input[name=scopes][value=queue]")
    page.select_option("#id_days", "30")
    page.click("#token-new button[type=submit]")
    secret = page.locator("#new-token-secret").inner_text()
    assert secret.startswith("bhp_")
    row = page.locator("#tokens-table tbody tr", has_text="laptop")
    expect(row).to_contain_text("queue, read")
    expect(row).to_contain_text("never")
    screenshot(page, "tokens-created")

    login = benchhub("login", "--server", live_server.url, "--token", secret, home=tmp_path)
    assert login.returncode == 0, login.stderr
    status = benchhub("status", home=tmp_path)
    assert status.returncode == 0, status.stderr

    page.goto(f"{live_server.url}/account/tokens/")
    expect(page.locator("#new-token")).to_have_count(0)  # shown once, never again
    assert secret not in page.content()
    expect(row).not_to_contain_text("never")  # the command's calls count as use
    row.locator("button", has_text="revoke").click()
    expect(row).to_contain_text("revoked")
    expect(row.locator("button")).to_have_count(0)
    screenshot(page, "tokens-revoked")

    refused = benchhub("status", home=tmp_path)
    assert refused.returncode == 2
    assert "refused the token" in refused.stderr
    assert errors == []
