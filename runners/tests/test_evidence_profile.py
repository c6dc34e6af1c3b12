"""Folding `perf script` output into flame-graph stacks (the real perf run is in
test_evidence.py: this is the folding's detail)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from benchhub_runner.evidence import profile

# As `perf script -F comm,ip,sym,dso` prints samples taken with -g: innermost frame first.
SCRIPT = """\
postgres
\t    55d0c2a1 hash_search_with_hash_value+0x41 (/pg/bin/postgres)
\t    55d0c2b2 LockAcquireExtended+0x120 (/pg/bin/postgres)
\t    55d0c2c3 PostgresMain+0x9a0 (/pg/bin/postgres)

postgres
\t    55d0c2a1 hash_search_with_hash_value+0x41 (/pg/bin/postgres)
\t    55d0c2b2 LockAcquireExtended+0x120 (/pg/bin/postgres)
\t    55d0c2c3 PostgresMain+0x9a0 (/pg/bin/postgres)

postgres
\t    7f1234 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t    1001a [unknown] ([unknown])

postgres

"""


def test_it_folds_samples_into_stacks_outermost_first():
    stacks = profile.fold(SCRIPT)

    assert stacks == {
        "postgres;PostgresMain;LockAcquireExtended;hash_search_with_hash_value": 2,
        # An unknown symbol is named by its object file when perf knows that much.
        "postgres;[unknown];[libc.so.6]": 1,
        "postgres": 1,
    }


def test_it_names_a_thread_whose_fork_perf_lost_after_the_server():
    # A loaded host overflows perf's buffer: the samples survive, the backend's fork event
    # does not, and perf names the thread by its id.
    script = SCRIPT.replace("postgres\n", ":6909\n", 1)

    assert profile.fold(script, process="postgres") == profile.fold(SCRIPT)
    assert ":6909;PostgresMain;LockAcquireExtended;hash_search_with_hash_value" in profile.fold(
        script
    )


def test_it_keeps_the_most_frequent_stacks_within_the_limits():
    stacks = profile.fold(SCRIPT)
    stacks.update({f"postgres;f{n}": 1 for n in range(3000)})

    text = profile.folded_text(stacks)

    lines = text.splitlines()
    assert len(lines) == profile.MAX_LINES
    assert lines[0] == "postgres;PostgresMain;LockAcquireExtended;hash_search_with_hash_value 2"
    assert all(line.rsplit(" ", 1)[1].isdigit() for line in lines)


def test_it_never_lets_a_name_break_the_folded_format():
    line = "\t 4a2b operator()(int; char) const+0x1 (/usr/lib/libx.so)"
    assert profile.frame_name(line) == "operator()(int:_char)_const"


def test_it_says_why_there_is_no_profile_on_a_host_without_perf(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH with no perf on it

    assert profile.Profiler.available() == "perf not installed"
    with pytest.raises(profile.ProfileError, match="perf not installed"):
        profile.Profiler(work=tmp_path).start(1)


def test_it_attaches_again_when_a_child_of_the_server_has_gone(monkeypatch, tmp_path):
    """The warm-up's backends are still exiting when the profile pass starts: perf -p refuses
    a list holding a pid that is gone, so the children are listed again."""
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    gone = subprocess.Popen(["true"])
    gone.wait()
    listings = iter([[busy.pid, gone.pid], [busy.pid]])
    monkeypatch.setattr(profile, "server_pids", lambda postmaster: next(listings))
    profiler = profile.Profiler(work=tmp_path)
    try:
        profiler.start(busy.pid)
        time.sleep(1.0)
        recorded = profiler.stop()
    finally:
        busy.kill()
        busy.wait()
    assert recorded["tool"] == "perf"
    assert recorded["folded"].strip()
