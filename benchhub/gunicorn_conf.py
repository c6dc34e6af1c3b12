"""gunicorn's settings for every BenchHub web process (`make up`, the compose file, Kubernetes,
the tests' and the benches' servers): `gunicorn -c python:benchhub.gunicorn_conf ...`.

Workers run threads (gunicorn's gthread worker): a long read holds one thread, not the worker.
A worker takes a connection only when a thread of its own is free for it. gthread's default
(1,000 connections a worker) let a worker whose threads were all rendering run pages accept a
`/healthz` probe and queue it behind them while another worker had threads idle: twenty readers
of the largest run pushed the probe's p95 to 2 s. With connections bounded by threads, the
kernel keeps a connection in the listen queue until some worker can start it at once. So
connections are not kept alive either (a kept-alive connection would hold a thread's place while
idle): a balancer in front keeps its own to the clients.
"""

from typing import Any

threads = 8
keepalive = 0
# The listen queue holds what all the threads cannot start yet (the balancer's and the probes').
backlog = 512


def on_starting(server: Any) -> None:
    """As many connections a worker as it has threads, whatever `--threads` says."""
    server.cfg.set("worker_connections", server.cfg.threads)
