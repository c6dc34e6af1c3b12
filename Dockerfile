# The BenchHub server image: gunicorn, Celery worker and beat all run from it (docker-compose.yml).
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    BENCHHUB_STATIC_ROOT=/app/static
WORKDIR /app
COPY requirements.txt .
RUN pip install -r requirements.txt
# The server reads pgbench output with the agent package's parser (one parser for both sides).
COPY runners ./runners
RUN pip install ./runners
COPY manage.py ./
COPY benchhub ./benchhub
COPY frontend ./frontend
COPY docs ./docs
# collectstatic only reads files; it needs settings, not a database or a real secret.
RUN SECRET_KEY=collectstatic DATABASE_URL=postgres://x@localhost/x REDIS_URL=redis://localhost \
    python manage.py collectstatic --noinput
# A numeric user, so that Kubernetes' runAsNonRoot can verify it (deploy/k8s).
RUN useradd --system --uid 10001 --user-group --no-create-home benchhub
USER 10001:10001
EXPOSE 8000
CMD ["gunicorn", "benchhub.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "4", "--threads", "8"]
