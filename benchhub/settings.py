"""BenchHub settings, read from the environment and nowhere else.

Production and development differ only by environment. There is no usable default secret: without
SECRET_KEY the project refuses to start (`make up` and `make test` generate one under ./var/).

Environment:
- DATABASE_URL   postgres://user:password@host:port/name (PostgreSQL only), required
- DATABASE_REPLICA_URL  a streaming replica of DATABASE_URL for the reads of pages and the API
                 where a few seconds' staleness is harmless (benchhub.replica); unset, none
- BENCHHUB_REPLICA_MAX_LAG_S  the replica is skipped while its replay lag exceeds this, default 10
- BENCHHUB_REPLICA_PIN_S      a client that wrote reads the primary this long, default 30
- DATABASE_POOLER  what DATABASE_URL reaches: "" (PostgreSQL itself, default), "session" (a
                 pooler in session mode) or "transaction" (pgbouncer in transaction mode: no
                 server-side cursors, and no server-side binding or prepared statements allowed)
- REDIS_URL      redis://host:port/db, Celery's broker, required
- SECRET_KEY     required
- ALLOWED_HOSTS  comma-separated, default "127.0.0.1,localhost"
- DEBUG          "1"/"true" to turn on; off unless asked for
- BENCHHUB_MAX_UPLOAD_BYTES  largest accepted request body, default 10 MB (10485760)
- BENCHHUB_SECURE            "1" behind TLS: secure cookies, HSTS, SSL redirect
- BENCHHUB_PRIVATE           "1": anonymous visitors see nothing but the sign-in page and
                             /healthz (pages redirect to sign-in, the API answers 401); default
                             off: anyone may read, people sign in to write
- BENCHHUB_PROXY_HOPS        trusted reverse proxies in front (default 0): the client address
                             for rate limits is taken that many entries from the right of
                             X-Forwarded-For
- BENCHHUB_RATELIMIT_WINDOW_S      rate-limit window, default 900 (seconds)
- BENCHHUB_RATELIMIT_LOGIN_USER    failed sign-ins per username from one address, default 10
- BENCHHUB_RATELIMIT_LOGIN_IP      failed sign-ins per client address per window, default 50
- BENCHHUB_RATELIMIT_TOKEN_IP      failed bearer tokens per client address per window, default 50
- BENCHHUB_COMPARE_CACHE_S   how long the Compare page's and the compare API's computed
                             comparisons are kept in the cache, keyed by the state of the runs
                             they come from (compare.selectors.cached), default 600 (seconds);
                             0: every request computes its comparison
- BENCHHUB_AGENT_ONLINE_S    a host counts as online this long after its agent last called in,
                             default 60 (seconds)
- BENCHHUB_BASE_URL          the site's address as people reach it, for links in notifications,
                             default "http://127.0.0.1:8000"
- BENCHHUB_NOTICE_SETTLE_S   how long an alert group's notice waits after a change of it is
                             confirmed, so the changes confirmed meanwhile (other workloads and
                             levels of the same commit range) go in the same notice; default 900
                             (seconds)
- EMAIL_HOST, EMAIL_PORT     the SMTP server notifications are sent through (default localhost:25)
- EMAIL_HOST_USER, EMAIL_HOST_PASSWORD   its credentials, if it wants any
- EMAIL_USE_TLS / EMAIL_USE_SSL          "1" for STARTTLS / implicit TLS
- EMAIL_TIMEOUT_S            SMTP time-out, default 10 (seconds)
- DEFAULT_FROM_EMAIL         the sender, default "benchhub@localhost"
- BENCHHUB_INGEST_QUEUE, BENCHHUB_ANALYSIS_QUEUE, BENCHHUB_BISECTION_QUEUE   the Celery queues
                             names, default "ingest", "analysis", "bisection"
- BENCHHUB_METRICS_TOKEN     turns /metrics (Prometheus) on; scrapers send it as a bearer token;
                             at least 32 characters; unset, /metrics answers 404
- PROMETHEUS_MULTIPROC_DIR   a directory the web server's processes share (emptied before it
                             starts): /metrics then sums their request latencies
- BENCHHUB_BLOB_BUCKET       an S3-compatible bucket for raw outputs, folded stacks, imported
                             texts and backups; unset (default), they stay in the database
- BENCHHUB_BLOB_ENDPOINT_URL the bucket's server when it is not AWS (MinIO, Ceph, R2, ...)
- BENCHHUB_BLOB_REGION       its region; BENCHHUB_BLOB_PREFIX a key prefix, default "benchhub"
- BENCHHUB_BLOB_MIN_BYTES    smaller values stay in their rows, default 1024; credentials are
                             boto3's own (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, a role)
- LOG_FORMAT                 "plain" (default) or "json": one JSON object a line
- BENCHHUB_WEBHOOK_ALLOW_PRIVATE  "1" lets webhooks call loopback, private and link-local
                             addresses (an internal chat server); off by default (docs/security.md)
- BENCHHUB_SOURCES_ALLOW_PRIVATE  "1" lets a recipe's tarball or git url name a loopback or
                             private address (a lab's mirror); each agent allows it too with
                             [build] allow_private_sources; off by default (docs/security.md)
"""

import os
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str | None = None) -> str:
    """The variable's value; without a default, a missing variable is a configuration error."""
    value = os.environ.get(name, default)
    if value is None or value == "":
        if default is not None:
            return default
        raise ImproperlyConfigured(f"{name} must be set in the environment")
    return value


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    lowered = value.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), not {value!r}")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, not {value!r}") from None


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in env_str(name, default).split(",") if item.strip()]


POOLERS = ("", "session", "transaction")


def database_from_url(url: str, *, pooler: str = "") -> dict:
    """Django's DATABASES entry for a postgres:// URL; any other scheme is refused.

    `pooler` says what the URL reaches (POOLERS). Behind a pooler in transaction mode each
    transaction may run on a different server connection, so nothing may outlive one: Django's
    server-side cursors (declared WITH HOLD outside a transaction, then fetched later) are turned
    off, and options that make psycopg prepare statements on the server are refused.
    """
    if pooler not in POOLERS:
        raise ImproperlyConfigured(
            f"DATABASE_POOLER must be one of {', '.join(map(repr, POOLERS))}, not {pooler!r}"
        )
    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql"):
        raise ImproperlyConfigured(
            "DATABASE_URL must be a postgres:// URL: BenchHub is PostgreSQL only"
        )
    options = dict(parse_qsl(parts.query))
    host = unquote(parts.hostname or "")
    # A socket directory may be given as ?host=/path, as libpq does.
    host = options.pop("host", host)
    if pooler == "transaction":
        _check_pooled_options(options)
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")) or "benchhub",
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": host,
        "PORT": str(parts.port or ""),
        "CONN_MAX_AGE": env_int("BENCHHUB_CONN_MAX_AGE", 60),
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": options,
        "DISABLE_SERVER_SIDE_CURSORS": pooler == "transaction",
        "TEST": {"NAME": env_str("BENCHHUB_TEST_DATABASE", "") or None},
    }


def _check_pooled_options(options: dict[str, str]) -> None:
    """Refuse the DATABASE_URL options under which psycopg keeps prepared statements on a server
    connection that a pooler in transaction mode hands to someone else next."""
    if options.get("server_side_binding", "").lower() in ("1", "true", "yes", "on"):
        raise ImproperlyConfigured(
            "DATABASE_URL: server_side_binding prepares statements on the server, which a pooler"
            " in transaction mode (DATABASE_POOLER=transaction) does not support"
        )
    if "prepare_threshold" in options:
        raise ImproperlyConfigured(
            "DATABASE_URL: prepare_threshold makes psycopg prepare statements on the server,"
            " which a pooler in transaction mode (DATABASE_POOLER=transaction) does not support"
        )


def storages_setting(*, bucket: str, endpoint_url: str, region: str, prefix: str) -> dict:
    """STORAGES["blobs"] for django-storages' S3 backend; credentials are boto3's own (the
    AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY environment, a profile, or an instance role)."""
    from botocore.config import Config

    options: dict = {
        "bucket_name": bucket,
        "location": prefix.strip("/"),
        "default_acl": None,
        "file_overwrite": True,
        # A bucket that does not answer fails an upload within seconds (the agent retries it),
        # rather than holding a web worker through botocore's default retries. Servers other
        # than AWS (MinIO, Ceph) name buckets in the path, not the host name.
        "client_config": Config(
            connect_timeout=5,
            read_timeout=30,
            retries={"max_attempts": 3, "mode": "standard"},
            s3={"addressing_style": "path" if endpoint_url else "auto"},
        ),
    }
    if endpoint_url:
        options["endpoint_url"] = endpoint_url
    if region:
        options["region_name"] = region
    return {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": options}


SECRET_KEY = env_str("SECRET_KEY")
DEBUG = env_bool("DEBUG")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = env_list(
    "CSRF_TRUSTED_ORIGINS", "http://127.0.0.1:8000,http://localhost:8000"
)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "benchhub.accounts",
    "benchhub.hosts",
    "benchhub.builds",
    "benchhub.configs",
    "benchhub.workloads",
    "benchhub.results",
    "benchhub.jobs",
    "benchhub.compare",
    "benchhub.review",
    "benchhub.regressions",
    "benchhub.bisections",
    "benchhub.api",
    "benchhub.dashboard",
]

MIDDLEWARE = [
    # First: it times the rest, and answers /metrics before host validation.
    "benchhub.monitoring.middleware.MetricsMiddleware",
    "benchhub.api.middleware.RequestSizeLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "benchhub.headers.SecurityHeadersMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before anything reads the database: it decides whether the request may read the replica.
    "benchhub.replica.ReplicaReadsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "benchhub.accounts.middleware.PrivateInstanceMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "benchhub.urls"
WSGI_APPLICATION = "benchhub.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "frontend" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": database_from_url(
        env_str("DATABASE_URL"), pooler=env_str("DATABASE_POOLER", "").strip().lower()
    )
}
if os.environ.get("DATABASE_REPLICA_URL"):
    DATABASES["replica"] = database_from_url(
        env_str("DATABASE_REPLICA_URL"), pooler=env_str("DATABASE_POOLER", "").strip().lower()
    )
    # A replica that does not answer is skipped within seconds, not after TCP's time-outs.
    DATABASES["replica"]["OPTIONS"].setdefault("connect_timeout", "2")
    # Tests run one database: the replica is the test database itself unless a test says not.
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
DATABASE_ROUTERS = ["benchhub.replica.ReplicaRouter"]
REPLICA_MAX_LAG_S = env_int("BENCHHUB_REPLICA_MAX_LAG_S", 10)
REPLICA_PIN_S = env_int("BENCHHUB_REPLICA_PIN_S", 30)
if REPLICA_PIN_S <= REPLICA_MAX_LAG_S:
    raise ImproperlyConfigured(
        "BENCHHUB_REPLICA_PIN_S must exceed BENCHHUB_REPLICA_MAX_LAG_S, or a client could read"
        " the replica before it has the client's own write"
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
# frontend/static holds a plotly.js built with only the trace types the pages draw
# (frontend/plotly/README.md), of the version the plotly package bundles (a test checks).
STATICFILES_DIRS = [BASE_DIR / "frontend" / "static"]
STATIC_ROOT = Path(env_str("BENCHHUB_STATIC_ROOT", str(BASE_DIR / "var" / "static")))
# Pages link static files by names that carry their content's hash (collectstatic's manifest);
# whitenoise serves those from STATIC_ROOT compressed and cached as immutable for ten years (a
# changed file gets a new name). A server with DEBUG off therefore needs collectstatic first:
# `make up`, the image and the tests (benchhub.testing.static) run it. With DEBUG on, pages use
# the plain names and whitenoise finds them in frontend/static.
# Files a browser asks for at the site's root (/favicon.ico):
WHITENOISE_ROOT = BASE_DIR / "frontend" / "root"
# Nothing a request needs lives on one web host (any number of replicas serve the same site):
# sessions in the database, the cache and rate-limit counters in Redis, static files in every
# copy of the code, uploads read into the database within their request.
SESSION_ENGINE = "django.contrib.sessions.backends.db"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
# Large values of the blob fields (benchhub.blobs) go to this bucket when one is named.
if os.environ.get("BENCHHUB_BLOB_BUCKET"):
    STORAGES["blobs"] = storages_setting(
        bucket=env_str("BENCHHUB_BLOB_BUCKET"),
        endpoint_url=env_str("BENCHHUB_BLOB_ENDPOINT_URL", ""),
        region=env_str("BENCHHUB_BLOB_REGION", ""),
        prefix=env_str("BENCHHUB_BLOB_PREFIX", "benchhub"),
    )
BLOB_MIN_BYTES = env_int("BENCHHUB_BLOB_MIN_BYTES", 1024)

# The whole request body, JSON uploads included; larger bodies get 413 (api.middleware).
MAX_UPLOAD_BYTES = env_int("BENCHHUB_MAX_UPLOAD_BYTES", 10 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_UPLOAD_BYTES

SECURE = env_bool("BENCHHUB_SECURE")
SESSION_COOKIE_SECURE = SECURE
CSRF_COOKIE_SECURE = SECURE
SECURE_SSL_REDIRECT = SECURE
SECURE_HSTS_SECONDS = 31536000 if SECURE else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE
# The header only makes the domain eligible for browsers' preload lists; submitting it is the
# operator's decision.
SECURE_HSTS_PRELOAD = SECURE
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if SECURE else None
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
# Content-Security-Policy and Permissions-Policy: benchhub.headers.

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "benchhub.hosts.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
        "benchhub.api.authentication.PrivateInstanceAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["benchhub.api.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["benchhub.api.parsers.StrictJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "benchhub.api.errors.exception_handler",
    "DEFAULT_PAGINATION_CLASS": "benchhub.api.pagination.CreatedCursorPagination",
    "PAGE_SIZE": 50,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "BenchHub API",
    "DESCRIPTION": "Upload and read pgbench results. The agent contract is docs/runner-api.md.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # The last authentication class only refuses anonymous callers of a private instance.
    "AUTHENTICATION_WHITELIST": [
        "benchhub.hosts.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Choice sets that share a field name get names of their own in the schema.
    "ENUM_NAME_OVERRIDES": {
        "JobStateEnum": "benchhub.jobs.models.Job.State",
        "RegressionStateEnum": "benchhub.regressions.models.Regression.State",
        "RunStatusEnum": "benchhub.results.models.Run.Status",
        "DeliveryStatusEnum": "benchhub.regressions.models.Delivery.Status",
        "BisectionStateEnum": "benchhub.bisections.models.Bisection.State",
    },
}

REDIS_URL = env_str("REDIS_URL")
# The cache holds the rate-limit counters (accounts.ratelimit), shared by every worker process,
# and what pages keep to answer faster (the comparisons, the compare form's lists, chart points).
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "benchhub",
        "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
    }
}
# Comparisons cached under the state of their runs: a change reads as a new key, so the time
# only bounds the memory a comparison nobody asks for again holds.
COMPARE_CACHE_S = env_int("BENCHHUB_COMPARE_CACHE_S", 600)
PRIVATE = env_bool("BENCHHUB_PRIVATE")
BENCHHUB_PROXY_HOPS = env_int("BENCHHUB_PROXY_HOPS", 0)
RATELIMIT_WINDOW_S = env_int("BENCHHUB_RATELIMIT_WINDOW_S", 900)
RATELIMIT_LOGIN_USER = env_int("BENCHHUB_RATELIMIT_LOGIN_USER", 10)
RATELIMIT_LOGIN_IP = env_int("BENCHHUB_RATELIMIT_LOGIN_IP", 50)
RATELIMIT_TOKEN_IP = env_int("BENCHHUB_RATELIMIT_TOKEN_IP", 50)
CELERY_BROKER_URL = REDIS_URL
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Publishing must not hang a request when Redis is away: the upload has committed by then and
# the periodic sweep (results.tasks.aggregate_pending) catches up later.
CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": 2, "socket_timeout": 5}
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
# One queue per kind of work, each with workers of its own (docker-compose.yml, deploy/k8s), so
# a backlog of change detection never delays the aggregation that makes an upload visible, and a
# bisection's step waits behind neither:
# - ingest: aggregation after uploads, job bookkeeping (lease expiry, scheduled jobs)
# - analysis: change detection after aggregation, notifications and their deliveries
# - bisection: a bisection's next step, which reads the aggregated runs of its jobs
# `make up` runs one worker on all three (`-Q ingest,analysis,bisection`).
INGEST_QUEUE = env_str("BENCHHUB_INGEST_QUEUE", "ingest")
ANALYSIS_QUEUE = env_str("BENCHHUB_ANALYSIS_QUEUE", "analysis")
BISECTION_QUEUE = env_str("BENCHHUB_BISECTION_QUEUE", "bisection")
CELERY_TASK_DEFAULT_QUEUE = INGEST_QUEUE
CELERY_TASK_ROUTES = {
    "jobs.*": {"queue": INGEST_QUEUE},
    "results.*": {"queue": INGEST_QUEUE},
    "regressions.*": {"queue": ANALYSIS_QUEUE},
    "bisections.*": {"queue": BISECTION_QUEUE},
}
BENCHHUB_QUEUES = {"ingest": INGEST_QUEUE, "analysis": ANALYSIS_QUEUE, "bisection": BISECTION_QUEUE}
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULER = "benchhub.jobs.beat:SafeDatabaseScheduler"
# A claimed job's lease: agents heartbeat every few seconds; one silent this long lost the job.
BENCHHUB_JOB_LEASE_S = env_int("BENCHHUB_JOB_LEASE_S", 60)
# A host whose agent called in (claim, heartbeat, upload) this recently counts as online.
BENCHHUB_AGENT_ONLINE_S = env_int("BENCHHUB_AGENT_ONLINE_S", 60)
CELERY_BEAT_SCHEDULE = {
    "expire-job-leases": {
        "task": "jobs.expire_leases",
        "schedule": float(env_int("BENCHHUB_LEASE_SWEEP_S", 10)),
        "options": {"expires": 9},
    },
    "aggregate-pending-runs": {
        "task": "results.aggregate_pending",
        "schedule": 60.0,
        "options": {"expires": 55},
    },
    # Next months' detail partitions, and retention when BENCHHUB_KEEP_DETAIL_MONTHS is set.
    "maintain-detail-partitions": {
        "task": "results.partitions_maintain",
        "schedule": 6 * 3600.0,
        "options": {"expires": 3600},
    },
    "advance-idle-bisections": {
        "task": "bisections.advance_idle",
        "schedule": 60.0,
        "options": {"expires": 55},
    },
}

# Months of per-second samples, raw outputs and evidence kept before the current one
# (results.partitions); unset: kept forever. Beat drops older months; runs, aggregates and
# verdicts' inputs stay.
BENCHHUB_KEEP_DETAIL_MONTHS = (
    env_int("BENCHHUB_KEEP_DETAIL_MONTHS", 0)
    if os.environ.get("BENCHHUB_KEEP_DETAIL_MONTHS")
    else None
)

# Notifications of detected changes (regressions.notifications).
BENCHHUB_BASE_URL = env_str("BENCHHUB_BASE_URL", "http://127.0.0.1:8000")
BENCHHUB_WEBHOOK_ALLOW_PRIVATE = env_bool("BENCHHUB_WEBHOOK_ALLOW_PRIVATE")
BENCHHUB_NOTICE_SETTLE_S = env_int("BENCHHUB_NOTICE_SETTLE_S", 900)
# Recipes whose sources name a private address (builds.services; agents have their own switch).
BENCHHUB_SOURCES_ALLOW_PRIVATE = env_bool("BENCHHUB_SOURCES_ALLOW_PRIVATE")
EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS")
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL")
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT_S", 10)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "benchhub@localhost")

METRICS_TOKEN_MIN_CHARS = 32
BENCHHUB_METRICS_TOKEN = os.environ.get("BENCHHUB_METRICS_TOKEN", "")
if BENCHHUB_METRICS_TOKEN and len(BENCHHUB_METRICS_TOKEN) < METRICS_TOKEN_MIN_CHARS:
    raise ImproperlyConfigured(
        f"BENCHHUB_METRICS_TOKEN must be at least {METRICS_TOKEN_MIN_CHARS} characters"
    )

LOG_FORMATS = {
    "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    "json": {"()": "benchhub.monitoring.logs.JsonFormatter"},
}
LOG_FORMAT = env_str("LOG_FORMAT", "plain")
if LOG_FORMAT not in LOG_FORMATS:
    raise ImproperlyConfigured(
        f"LOG_FORMAT must be one of {', '.join(LOG_FORMATS)}, not {LOG_FORMAT!r}"
    )
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"configured": LOG_FORMATS[LOG_FORMAT]},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "configured"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
