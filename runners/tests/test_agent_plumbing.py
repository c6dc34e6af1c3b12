"""The agent's configuration, HTTP client and spool, against a real local HTTP server."""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from benchhub_runner import cli
from benchhub_runner.agent.loop import Agent
from benchhub_runner.config import Config, ConfigError, config_load, config_write
from benchhub_runner.transport.client import ApiError, Client, Unreachable
from benchhub_runner.transport.spool import Spool


class FakeServer:
    """A BenchHub stand-in on 127.0.0.1 answering from a script of (status, body) replies."""

    def __init__(self) -> None:
        self.replies: list[tuple[int, dict]] = []
        self.requests: list[tuple[str, str, dict | None]] = []
        # Heartbeats arrive this much later than they are sent: a slow network's reordering.
        self.heartbeat_delay_s = 0.0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                if self.path.endswith("/heartbeat/"):
                    time.sleep(owner.heartbeat_delay_s)
                owner.requests.append((self.path, self.headers.get("Authorization", ""), body))
                status, reply = owner.replies.pop(0) if owner.replies else (201, {"url": "/x/"})
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 503:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    yield fake
    fake.close()


def client_for(url: str) -> Client:
    return Client(server=url, token="bhr_12345678_secret", attempts=3, backoff_s=0.01)


def test_a_job_the_agent_cannot_read_fails_at_the_claim_naming_the_field(server, tmp_path):
    job = {"id": 7, "attempt": 1, "versions": ["13"], "repeats": 1, "duration_s": 2}
    job.update(workload={"name": "so", "builtin": "select-only"}, clients=[1, "many"])
    server.replies = [(200, job), (200, {"id": 7, "state": "failed"})]
    config = Config(server=server.url, token="bhr_12345678_secret", host="h", work_dir=tmp_path)

    outcome = Agent(config=config, client=client_for(server.url)).once()

    assert outcome == "failed"
    assert [path for path, _, _ in server.requests] == [
        "/api/v1/jobs/claim/",
        "/api/v1/jobs/7/finish/",
    ]
    finish = server.requests[1][2]
    assert (finish["outcome"], finish["stage"]) == ("failed", "claim")
    assert "clients[1]: expected an integer, got 'many'" in finish["message"]


def test_it_retries_a_503_and_sends_the_token(server):
    server.replies = [(503, {"error": "busy"}), (201, {"url": "/api/v1/runs/u/"})]
    assert client_for(server.url).upload({"run_uuid": "u"}) == {"url": "/api/v1/runs/u/"}
    assert len(server.requests) == 2
    assert server.requests[0][1] == "Bearer bhr_12345678_secret"


def test_it_does_not_retry_a_refusal_and_keeps_the_servers_reasons(server):
    server.replies = [(400, {"error": "invalid", "fields": {"results[0].tps": ["bad"]}})]
    with pytest.raises(ApiError) as refused:
        client_for(server.url).upload({"run_uuid": "u"})
    assert refused.value.status == 400
    assert refused.value.body["fields"] == {"results[0].tps": ["bad"]}
    assert len(server.requests) == 1


def test_an_absent_server_is_unreachable_after_its_attempts():
    with pytest.raises(Unreachable):
        client_for("http://127.0.0.1:9").upload({"run_uuid": "u"})


def test_the_spool_keeps_runs_until_the_server_has_them(server, tmp_path):
    spool = Spool(tmp_path / "spool")
    for name in ("a", "b", "c"):
        spool.put({"run_uuid": name, "results": []})
    server.replies = [(201, {}), (409, {"error": "stale_job", "detail": "attempt gone"})]
    report = spool.flush(client_for(server.url))
    assert (report.sent, report.rejected, report.waiting) == (["a", "c"], ["b"], [])
    assert spool.pending() == []
    kept = json.loads((tmp_path / "spool" / "rejected" / "b.error.json").read_text())
    assert kept["status"] == 409 and (tmp_path / "spool" / "rejected" / "b.json").exists()


def test_the_spool_waits_while_the_server_is_away(tmp_path):
    spool = Spool(tmp_path / "spool")
    spool.put({"run_uuid": "a"})
    report = spool.flush(client_for("http://127.0.0.1:9"))
    assert report.waiting == ["a"] and [p.stem for p in spool.pending()] == ["a"]


def test_configuration_comes_from_file_then_environment_then_flags(tmp_path, monkeypatch):
    path = tmp_path / "agent.toml"
    path.write_text(
        'server = "http://file:1"\ntoken = "bhr_file"\ntags = ["nvme"]\n'
        'work_dir = "/srv/w"\n[installations]\n"13" = "/opt/pg13/bin"\n'
    )
    path.chmod(0o600)
    monkeypatch.setenv("BENCHHUB_TOKEN", "bhr_env")
    config = config_load(path=path, overrides={"server": "http://flag:2", "work_dir": None})
    assert (config.server, config.token, config.tags) == ("http://flag:2", "bhr_env", ["nvme"])
    assert config.work_dir == Path("/srv/w") and config.cache_dir == Path("/srv/w/cache")
    assert config.installations == {"13": Path("/opt/pg13/bin")}


def test_it_reads_the_hosts_tags_and_names_a_bad_one(tmp_path, monkeypatch):
    monkeypatch.delenv("BENCHHUB_CONFIG", raising=False)
    path = tmp_path / "agent.toml"

    def load(text: str) -> Config:
        path.write_text('server = "http://x:1"\n' + text)
        return config_load(path=path, overrides={"token": "bhr_flag"})

    assert load('tags = ["nvme", "56-core"]').tags == ["nvme", "56-core"]
    assert load("tags = []").tags == []
    assert load("").tags is None  # named nowhere: the server keeps the host's tags
    for text, message in (
        ('tags = ["nvme", "NVMe"]', r"tags\[1\]: 'NVMe': use 1 to 64 lower-case"),
        ('tags = ["*"]', r"tags\[0\]: '\*'"),
        ('tags = ["a", "a"]', r"tags: Each tag once"),
        ('tags = "nvme"', r"tags must be a list"),
    ):
        with pytest.raises(ConfigError, match=message):
            load(text)


def test_a_missing_token_or_a_broken_file_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("BENCHHUB_TOKEN", raising=False)
    monkeypatch.delenv("BENCHHUB_CONFIG", raising=False)
    with pytest.raises(ConfigError, match="token"):
        config_load(overrides={"server": "http://x:1"})
    broken = tmp_path / "bad.toml"
    broken.write_text("server = ")
    with pytest.raises(ConfigError, match=r"bad\.toml"):
        config_load(path=broken)


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_it_refuses_a_token_file_others_may_read(tmp_path, monkeypatch, mode):
    monkeypatch.delenv("BENCHHUB_TOKEN", raising=False)
    config = tmp_path / "agent.toml"
    config.write_text('server = "http://x:1"\ntoken = "bhr_secret"\n')
    config.chmod(mode)
    with pytest.raises(ConfigError, match="chmod 600"):
        config_load(path=config)
    token = tmp_path / "token"
    token.write_text("bhr_secret\n")
    token.chmod(mode)
    config.write_text(f'server = "http://x:1"\ntoken_file = "{token}"\n')
    with pytest.raises(ConfigError, match="chmod 600"):
        config_load(path=config)
    token.chmod(0o600)
    assert config_load(path=config).token == "bhr_secret"


def test_it_reads_a_shared_settings_file_when_the_token_comes_from_the_environment(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("BENCHHUB_TOKEN", "bhr_from_env")
    config = tmp_path / "agent.toml"
    config.write_text('server = "http://x:1"\npoll_interval_s = 1\n')
    config.chmod(0o644)
    assert config_load(path=config).token == "bhr_from_env"


def test_it_writes_the_configuration_for_the_agent_alone(tmp_path, monkeypatch):
    monkeypatch.delenv("BENCHHUB_TOKEN", raising=False)
    monkeypatch.delenv("BENCHHUB_CONFIG", raising=False)
    path = tmp_path / "etc" / "agent.toml"
    old = os.umask(0)
    try:
        config_write(path, {"server": "http://x:1", "token": 'bhr_"q\\', "trust_job_code": True})
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o600
    config = config_load(path=path)
    assert (config.token, config.trust_job_code) == ('bhr_"q\\', True)
    assert config.spool_max_tries == 5


def test_it_does_not_trust_job_code_unless_told(tmp_path, monkeypatch):
    monkeypatch.delenv("BENCHHUB_CONFIG", raising=False)
    assert config_load(overrides={"server": "http://x:1", "token": "t"}).trust_job_code is False
    with pytest.raises(ConfigError, match="trust_job_code"):
        config_load(overrides={"server": "http://x:1", "token": "t", "trust_job_code": "yes"})


def spool_of(tmp_path, *names: str, max_tries: int = 5) -> Spool:
    spool = Spool(tmp_path / "spool", max_tries=max_tries)
    for index, name in enumerate(names):
        path = spool.put({"run_uuid": name, "results": []})
        os.utime(path, (1000 + index, 1000 + index))  # oldest first, in this order
    return spool


def test_it_sets_aside_an_invalid_run_and_sends_the_ones_behind_it(server, tmp_path):
    spool = spool_of(tmp_path, "a", "b", "c")
    invalid = {"error": "invalid", "detail": "bad", "fields": {"results[0].tps": ["negative"]}}
    server.replies = [(400, invalid), (201, {}), (201, {})]
    report = spool.flush(client_for(server.url))
    assert (report.sent, report.rejected, report.waiting) == (["b", "c"], ["a"], [])
    (kept,) = spool.set_aside()
    assert (kept.run_uuid, kept.status, kept.error, kept.tries) == ("a", 400, "invalid", 1)
    assert "results[0].tps: negative" in kept.detail and kept.set_aside_at


def test_it_sets_aside_a_run_the_server_keeps_failing_on_after_its_tries(server, tmp_path):
    spool = spool_of(tmp_path, "a", "b", max_tries=2)
    server.replies = [(500, {"error": "server_error"}), (201, {})]
    first = spool.flush(client_for(server.url), attempts=1)
    assert (first.sent, first.rejected, first.waiting) == (["b"], [], ["a"])
    server.replies = [(500, {"error": "server_error"})]
    second = spool.flush(client_for(server.url), attempts=1)
    assert (second.sent, second.rejected, second.waiting) == ([], ["a"], [])
    (kept,) = spool.set_aside()
    assert (kept.status, kept.tries) == (500, 2)
    assert spool.pending() == [] and not list((tmp_path / "spool").glob("*.tries"))


@pytest.mark.parametrize(
    ("status", "body"),
    [(401, {"error": "not_authenticated"}), (403, {"error": "permission_denied"}), (503, {})],
)
def test_it_keeps_runs_waiting_when_the_refusal_is_not_about_the_run(
    server, tmp_path, status, body
):
    spool = spool_of(tmp_path, "a", "b")
    server.replies = [(status, body)] * 3
    report = spool.flush(client_for(server.url), attempts=1)
    assert (report.sent, report.rejected, report.waiting) == ([], [], ["a", "b"])
    assert spool.set_aside() == [] and len(server.requests) == 1


def test_the_spool_command_lists_set_aside_runs_and_retries_one(server, tmp_path, capsys):
    spool = spool_of(tmp_path, "a", "b")
    server.replies = [(409, {"error": "stale_job", "detail": "attempt 1 is gone"}), (400, {})]
    spool.flush(client_for(server.url))
    assert cli.main(["spool", "--work-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "0 run(s) waiting" in out and "2 run(s) set aside" in out
    assert "409 stale_job" in out and "attempt 1 is gone" in out
    assert cli.main(["spool", "--work-dir", str(tmp_path), "--retry", "a"]) == 0
    assert [p.stem for p in spool.pending()] == ["a"]
    assert [s.run_uuid for s in spool.set_aside()] == ["b"]
    assert cli.main(["spool", "--work-dir", str(tmp_path), "--retry", "nope"]) == 2


def test_the_agent_reports_set_aside_runs_to_the_server_once(server, tmp_path):
    config = Config(server=server.url, token="bhr_12345678_secret", host="h", work_dir=tmp_path)
    agent = Agent(config=config, client=client_for(server.url))
    agent.spool.put({"run_uuid": "a"})
    server.replies = [(400, {"error": "invalid", "detail": "no"}), (204, {})]
    assert agent.deliver() is True
    paths = [path for path, _, _ in server.requests]
    assert paths == ["/api/v1/runs/", "/api/v1/hosts/spool/"]
    (entry,) = server.requests[1][2]["set_aside"]
    assert (entry["run_uuid"], entry["status"], entry["error"]) == ("a", 400, "invalid")
    agent.deliver()
    assert len(server.requests) == 2  # nothing changed: not reported again


def test_the_agent_closes_a_spool_left_open_to_others_before_it_claims(server, tmp_path):
    # A spool as an older agent or a umask may leave it: open to every account on the host,
    # holding a set-aside run (host facts, the server's answer) that job code must not read.
    rejected = tmp_path / "spool" / "rejected"
    rejected.mkdir(parents=True)
    (tmp_path / "spool").chmod(0o755)
    (rejected / "old.json").write_text('{"run_uuid": "old"}')
    config = Config(server=server.url, token="bhr_12345678_secret", host="h", work_dir=tmp_path)
    server.replies = [(204, {})]

    assert Agent(config=config, client=client_for(server.url)).once() == "idle"

    assert [path for path, _, _ in server.requests] == ["/api/v1/jobs/claim/"]
    assert stat.S_IMODE((tmp_path / "spool").stat().st_mode) == 0o700


def test_the_agent_offers_its_configured_tags_at_each_claim_and_none_when_it_has_none(
    server, tmp_path
):
    tagged = Config(
        server=server.url, token="bhr_12345678_secret", host="h", work_dir=tmp_path, tags=["nvme"]
    )
    server.replies = [(204, {}), (204, {})]
    Agent(config=tagged, client=client_for(server.url)).once()
    untagged = Config(server=server.url, token="bhr_12345678_secret", host="h", work_dir=tmp_path)
    Agent(config=untagged, client=client_for(server.url)).once()
    assert [body for _, _, body in server.requests] == [{"tags": ["nvme"]}, None]


def test_the_configure_command_writes_a_file_for_the_agent_alone(tmp_path, monkeypatch):
    monkeypatch.delenv("BENCHHUB_TOKEN", raising=False)
    path = tmp_path / "agent.toml"
    argv = ["configure", "--config", str(path), "--server", "http://x:1", "--token", "bhr_t"]
    assert cli.main([*argv, "--trust-job-code"]) == 0
    assert path.stat().st_mode & 0o777 == 0o600
    config = config_load(path=path)
    assert (config.token, config.trust_job_code) == ("bhr_t", True)


def test_a_job_with_refused_code_fails_at_job_code_naming_field_and_line(server, tmp_path):
    job = {"id": 8, "attempt": 1, "versions": ["13"], "repeats": 1, "duration_s": 2}
    job.update(workload={"name": "x", "builtin": "select-only", "setup": ["SELECT 1;\n\\! id"]})
    job.update(clients=[1], config_overrides={"shared_preload_libraries": "evil"})
    server.replies = [(200, job), (200, {"id": 8, "state": "failed"})]
    config = Config(server=server.url, token="bhr_12345678_secret", host="h", work_dir=tmp_path)

    outcome = Agent(config=config, client=client_for(server.url)).once()

    assert outcome == "failed"
    finish = server.requests[1][2]
    assert (finish["outcome"], finish["stage"]) == ("failed", "job code")
    assert "workload.setup[0]: line 2: psql meta-command \\!" in finish["message"]
    assert "config_overrides.shared_preload_libraries" in finish["message"]
    assert not (tmp_path / "jobs").exists()
