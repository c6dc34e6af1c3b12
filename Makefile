# BenchHub: `make up` starts the whole stack, `make test` runs the full suite.
# Both set themselves up: a virtualenv in .venv, and (unless DATABASE_URL / REDIS_URL are set) a
# private PostgreSQL and Redis with their data under ./var/.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
STACK := $(BIN)/python scripts/stack.py

.PHONY: help install browser tools up demo test test-slow test-all bench load lint check stop clean runner-token \
	backup restore

help:
	@echo "make up        start BenchHub (gunicorn, Celery worker and beat) on http://127.0.0.1:8000"
	@echo "make demo      make up, plus a local agent comparing PostgreSQL 13 with 14 for real"
	@echo "make test      run the test suite (fast tests)"
	@echo "make test-all  run the full suite, slow end-to-end tests included"
	@echo "make bench     self-benchmark: prints the tables, writes bench/results.json, merges into docs/performance-results.md (BENCH_ARGS=--quick)"
	@echo "make load      50 agents and 20 readers for 5 minutes: bench/load-results.json (LOAD_ARGS=--quick)"
	@echo "               LOAD_ARGS=--scale-out: through haproxy, 2 gunicorns, a worker per queue, pgbouncer, a replica"
	@echo "make runner-token HOST=name   issue a token for the agent on host 'name'"
	@echo "make lint      format and fix with ruff;  make check: ruff, migrations, mypy (CI)"
	@echo "make stop      stop the private PostgreSQL and Redis started by 'make up'/'stack.py start'"
	@echo "make backup [FILE=...] / make restore FILE=...   pg_dump the repository / put it back"

$(STAMP): requirements.txt requirements-dev.txt runners/pyproject.toml
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "BenchHub needs Python 3.11 or newer"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	# The agent package: its CLI, and the pgbench parser the server imports too.
	$(BIN)/python -m pip install --quiet -e ./runners
	touch $@

# What the tests need from Debian: Chromium for the browser tests, ccache for the builds from
# source (the agent uses it when the host has it, and the build tests check that it did), kubectl
# to render the Kubernetes manifests, haproxy to check the compose file's load balancer
# (test_deployment), pgbouncer to serve BenchHub through a pooler in transaction mode
# (test_pooler). As root with apt, the missing ones are installed; otherwise install them
# yourself. promtool, to check and unit-test the alerting rules (test_alert_rules), is unpacked
# from Debian's prometheus package into the virtualenv rather than installed: installing the
# package starts a Prometheus server on the machine.
browser tools:
	@missing=""; \
	[ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	[ -x /usr/bin/bwrap ] || missing="$$missing bubblewrap"; \
	command -v ccache >/dev/null || missing="$$missing ccache"; \
	command -v kubectl >/dev/null || missing="$$missing kubernetes-client"; \
	command -v haproxy >/dev/null || missing="$$missing haproxy"; \
	[ -x /usr/sbin/pgbouncer ] || missing="$$missing pgbouncer"; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	elif [ -n "$$missing" ]; then echo "tests need:$$missing (apt-get install$$missing)"; fi
	@if [ ! -x $(BIN)/promtool ] && command -v apt-get >/dev/null; then \
		mkdir -p $(BIN) && tmp=$$(mktemp -d) && \
		sandbox=""; [ "$$(id -u)" != 0 ] || { apt-get update -qq && sandbox="-o APT::Sandbox::User=root"; }; \
		(cd $$tmp && apt-get download -qq $$sandbox prometheus >/dev/null) && \
		dpkg-deb --fsys-tarfile $$tmp/prometheus_*.deb | tar -xO ./usr/bin/promtool > $$tmp/promtool && \
		install -m 755 $$tmp/promtool $(BIN)/promtool; rm -rf $$tmp; \
	fi

install: $(STAMP)

up: $(STAMP)
	$(STACK) up

# make up, plus a local agent running a real 13-against-14 comparison (README: Demo).
demo: $(STAMP)
	$(STACK) demo

# The suite runs on several processes, then the few tests marked `alone` by themselves
# (scripts/test.py); TEST_WORKERS=N sets the processes (default: 2 per CPU for the fast tests,
# which mostly wait, 1 per CPU for the slow ones, at most 4).
TEST := $(STACK) exec -- $(BIN)/python scripts/test.py

test: $(STAMP) tools
	$(TEST) --per-cpu 2 "not slow" $(PYTEST_ARGS)

test-slow: $(STAMP) tools
	$(TEST) slow $(PYTEST_ARGS)

test-all: $(STAMP) tools
	$(TEST) "slow or not slow" $(PYTEST_ARGS)

# The self-benchmark (docs/performance.md), in its own database: make bench [BENCH_ARGS="--quick"]
bench: $(STAMP)
	$(STACK) exec -- $(BIN)/python -m bench.run $(BENCH_ARGS)

# The load test (docs/performance.md, Load), in its own database: make load [LOAD_ARGS="--quick"];
# LOAD_ARGS="--scale-out" runs the site as the compose file scales it (bench/scaleout.py).
load: $(STAMP)
	$(STACK) exec -- $(BIN)/python -m bench.load $(LOAD_ARGS)

# Issue a runner token for an agent: make runner-token HOST=bench-01
runner-token: $(STAMP)
	@test -n "$(HOST)" || { echo "usage: make runner-token HOST=name"; exit 2; }
	@$(STACK) exec -- $(BIN)/python manage.py runner_create $(HOST)

lint: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

check: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy --config-file runners/pyproject.toml runners/benchhub_runner runners/benchhub_cli
	$(STACK) exec -- $(BIN)/python manage.py makemigrations --check --dry-run
	$(STACK) exec -- $(BIN)/mypy
	if command -v docker-compose >/dev/null; then \
		SECRET_KEY=x POSTGRES_PASSWORD=x docker-compose config -q; fi

# make backup [FILE=path]: a pg_dump of the repository (default var/backups/benchhub-<time>.dump)
backup: $(STAMP)
	$(STACK) exec -- $(BIN)/python scripts/backup.py dump \
		$(or $(FILE),var/backups/benchhub-$(shell date -u +%Y%m%d-%H%M%S).dump)

# make restore FILE=path: replace the repository with a backup (one transaction)
restore: $(STAMP)
	@test -n "$(FILE)" || { echo "usage: make restore FILE=var/backups/....dump"; exit 2; }
	$(STACK) exec -- $(BIN)/python scripts/backup.py restore $(FILE)

stop: $(STAMP)
	$(STACK) stop

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache
