"""A job's throwaway OS account: every process it runs ends with it, wherever it went."""

from __future__ import annotations

import pwd
import subprocess

from benchhub_runner.sandbox.account import (
    account_end,
    account_find,
    account_processes,
    account_remove,
    job_account_name,
    runner_account,
)


def test_it_kills_every_process_of_a_job_account_then_removes_it():
    account = runner_account(name=job_account_name(987654, 3))
    assert account is not None and account.name == "bhjob-987654-3"
    # Detached from the caller in a new session, grandchildren included, and one that forks on.
    script = "sleep 1000 & (setsid sleep 1001 &) ; while :; do sleep 1002 & sleep 0.01; done"
    subprocess.Popen(
        ["setsid", "sh", "-c", script],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        **account.popen_kwargs(),
    )
    try:
        subprocess.run(["sleep", "0.5"], check=True)
        assert len(account_processes(account.uid)) >= 3

        assert account_end(account) == []

        assert account_processes(account.uid) == []
    finally:
        account_end(account)
        account_remove(account)
    assert account_find(account.name) is None
    assert account.name not in {entry.pw_name for entry in pwd.getpwall()}
    account_remove(account)  # twice: nothing to do
