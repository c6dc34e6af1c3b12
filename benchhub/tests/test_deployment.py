"""The deployment descriptions (deploy/k8s, docker-compose.yml) against the code they run: they
render and validate offline, every process they start is one the code has, and their workers
consume exactly the Celery queues the settings route tasks to."""

import importlib
import shutil
import subprocess
from pathlib import Path

import kubernetes_validate
import pytest
import yaml
from django.conf import settings
from django.core.management import get_commands

from benchhub.testing import balancer, installs
from benchhub.testing.balancer import render
from benchhub.testing.processes import ROOT

K8S = ROOT / "deploy" / "k8s"
RULES = ROOT / "deploy" / "prometheus" / "benchhub-rules.yml"
# Custom resources (the Prometheus operator's), which the Kubernetes schemas do not know.
CUSTOM_API_GROUPS = ("monitoring.coreos.com/",)
# The oldest Kubernetes the manifests promise to fit (autoscaling/v2 is there since 1.23) and
# the newest the bundled schemas know.
K8S_VERSIONS = ("1.27.0", kubernetes_validate.latest_version())


def command_check(argv: list[str]) -> None:
    """Fails unless `argv` starts a process this code base has: a gunicorn application, a
    Celery worker on the routed queues or beat with an importable scheduler, a manage.py
    command."""
    program, *args = argv
    if program == "gunicorn":
        module, _, attribute = args[0].partition(":")
        assert callable(getattr(importlib.import_module(module), attribute))
    elif program == "celery":
        assert args[:2] == ["-A", "benchhub"], argv
        assert args[2] in ("worker", "beat"), argv
        if args[2] == "worker":
            queues = args[args.index("-Q") + 1].split(",")
            assert set(queues) <= set(settings.BENCHHUB_QUEUES.values()), argv
        if "--scheduler" in args:
            module, _, name = args[args.index("--scheduler") + 1].partition(":")
            assert isinstance(getattr(importlib.import_module(module), name), type)
    elif program == "python":
        assert args[0] == "manage.py", argv
        assert args[1] in get_commands(), argv
    else:
        raise AssertionError(f"unknown program in {argv}")


def kustomize(directory: Path) -> list[dict]:
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl is missing: `make tools` installs kubernetes-client"
    done = subprocess.run(
        [kubectl, "kustomize", str(directory)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def by_kind(docs: list[dict], kind: str) -> dict[str, dict]:
    return {doc["metadata"]["name"]: doc for doc in docs if doc["kind"] == kind}


def containers(pod_spec: dict) -> list[dict]:
    return [*pod_spec.get("initContainers", []), *pod_spec["containers"]]


def pod_specs(docs: list[dict]) -> dict[str, dict]:
    return {
        doc["metadata"]["name"]: doc["spec"]["template"]["spec"]
        for doc in docs
        if doc["kind"] in ("Deployment", "Job")
    }


@pytest.fixture(scope="module", params=["base", "overlays/example"])
def manifests(request) -> list[dict]:
    return kustomize(K8S / request.param)


def test_it_renders_manifests_that_the_kubernetes_schemas_accept(manifests):
    assert len(manifests) >= 10
    for version in K8S_VERSIONS:
        for doc in manifests:
            if not doc["apiVersion"].startswith(CUSTOM_API_GROUPS):
                kubernetes_validate.validate(doc, version, strict=True)


def test_it_catches_a_manifest_the_schemas_refuse(manifests):
    # The check above can fail: a misspelt field is refused.
    web = by_kind(manifests, "Deployment")["benchhub-web"]
    broken = {**web, "spec": {**web["spec"], "replica": 2}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSIONS[0], strict=True)


def test_it_starts_only_processes_the_code_has(manifests):
    for name, spec in pod_specs(manifests).items():
        for container in containers(spec):
            command_check(container["command"])
            assert container["securityContext"]["readOnlyRootFilesystem"], name
        assert spec["securityContext"]["runAsNonRoot"], name


def test_it_runs_one_worker_deployment_per_celery_queue(manifests):
    consumed = {}
    for name, spec in pod_specs(manifests).items():
        command = spec["containers"][0]["command"]
        if command[:4] == ["celery", "-A", "benchhub", "worker"]:
            consumed[command[command.index("-Q") + 1]] = name
    routed = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}
    assert set(consumed) == routed | {settings.CELERY_TASK_DEFAULT_QUEUE}
    assert set(consumed) == set(settings.BENCHHUB_QUEUES.values())


def test_it_runs_exactly_one_beat_stopped_before_its_successor_starts(manifests):
    beats = [
        doc
        for doc in by_kind(manifests, "Deployment").values()
        if doc["spec"]["template"]["spec"]["containers"][0]["command"][3] == "beat"
    ]
    assert len(beats) == 1
    assert beats[0]["spec"]["replicas"] == 1
    assert beats[0]["spec"]["strategy"] == {"type": "Recreate"}


def test_it_migrates_in_a_job_that_the_other_pods_wait_for(manifests):
    job = by_kind(manifests, "Job")["benchhub-migrate"]
    assert job["spec"]["template"]["spec"]["containers"][0]["command"][2] == "migrate"
    for doc in by_kind(manifests, "Deployment").values():
        init = doc["spec"]["template"]["spec"]["initContainers"]
        assert init[0]["command"] == ["python", "manage.py", "migrate", "--check"]


def test_it_autoscales_the_web_pods_that_are_probed_on_healthz(manifests):
    web = by_kind(manifests, "Deployment")["benchhub-web"]
    assert "replicas" not in web["spec"]  # the autoscaler owns the count
    container = web["spec"]["template"]["spec"]["containers"][0]
    for probe in ("readinessProbe", "livenessProbe"):
        get = container[probe]["httpGet"]
        assert get["path"] == "/healthz"
        host = {h["name"]: h["value"] for h in get["httpHeaders"]}["Host"]
        config = by_kind(manifests, "ConfigMap")["benchhub-config"]["data"]
        assert host in config["ALLOWED_HOSTS"].split(",")
    hpa = by_kind(manifests, "HorizontalPodAutoscaler")["benchhub-web"]
    assert hpa["spec"]["scaleTargetRef"]["name"] == "benchhub-web"
    assert container["resources"]["requests"]["cpu"]  # what CPU utilisation is measured against
    service = by_kind(manifests, "Service")["benchhub-web"]
    assert service["spec"]["selector"].items() <= web["spec"]["selector"]["matchLabels"].items()
    ingress = by_kind(manifests, "Ingress")["benchhub"]
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == "benchhub-web"


def test_the_example_overlay_ships_the_alert_rules_file_as_a_prometheus_rule(tmp_path):
    """The PrometheusRule holds the rules file's groups, unchanged, and promtool accepts them;
    the base, which any cluster can apply, has none (the operator's CRD may be missing)."""
    assert not by_kind(kustomize(K8S / "base"), "PrometheusRule")
    rule = by_kind(kustomize(K8S / "overlays" / "example"), "PrometheusRule")["benchhub"]
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["metadata"]["namespace"] == "benchhub"
    assert rule["spec"] == yaml.safe_load(RULES.read_text())
    rendered = tmp_path / "rules.yml"
    rendered.write_text(yaml.safe_dump(rule["spec"]))
    promtool = installs.promtool()
    done = subprocess.run(
        [promtool, "check", "rules", str(rendered)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_it_refers_to_secrets_and_commits_none(manifests):
    assert not by_kind(manifests, "Secret")
    secret_names = set()
    for spec in pod_specs(manifests).values():
        for container in containers(spec):
            env = {item["name"]: item for item in container["env"]}
            for name in ("SECRET_KEY", "DATABASE_URL", "REDIS_URL"):
                secret_names.add(env[name]["valueFrom"]["secretKeyRef"]["name"])
            secret = [env[name] for name in ("SECRET_KEY", "DATABASE_URL", "REDIS_URL")]
            secret += [env[name] for name in ("BENCHHUB_METRICS_TOKEN",) if name in env]
            assert all("value" not in item for item in secret)
    assert secret_names == {"benchhub"}


COMPOSE = ROOT / "docker-compose.yml"
HAPROXY_CFG = ROOT / "deploy" / "haproxy" / "haproxy.cfg"


@pytest.fixture(scope="module")
def compose() -> dict[str, dict]:
    return yaml.safe_load(COMPOSE.read_text())["services"]


def app_services(compose: dict[str, dict]) -> dict[str, dict]:
    return {name: s for name, s in compose.items() if s.get("image") == "benchhub:latest"}


def test_compose_starts_only_processes_the_code_has(compose):
    services = app_services(compose)
    assert {"migrate", "web", "beat"} <= set(services)
    for service in services.values():
        command_check(service["command"])


def test_compose_runs_one_worker_service_per_celery_queue_and_one_beat(compose):
    consumed = {}
    for name, service in app_services(compose).items():
        command = service["command"]
        if command[3] == "worker":
            queues = command[command.index("-Q") + 1].split(",")
            assert len(queues) == 1, name  # scaled on its own
            consumed[queues[0]] = name
    assert set(consumed) == set(settings.BENCHHUB_QUEUES.values())
    assert [name for name, s in compose.items() if s.get("command", [""])[3:4] == ["beat"]] == [
        "beat"
    ]


def test_compose_web_scales_behind_its_own_load_balancer(compose):
    web = compose["web"]
    assert "ports" not in web  # a published port would clash between replicas
    bind = web["command"][web["command"].index("--bind") + 1]
    port = bind.rpartition(":")[2]
    lb = compose["lb"]
    assert lb["image"].split(":")[0] == "haproxy"  # the official image
    assert lb["ports"] == ["${BENCHHUB_PORT:-8000}:8000"]
    source, target, _ = lb["volumes"][0].split(":")
    assert (ROOT / source).resolve() == HAPROXY_CFG
    assert target == "/usr/local/etc/haproxy/haproxy.cfg"
    config = HAPROXY_CFG.read_text()
    assert f" web:{port} check resolvers docker" in config
    assert "uri /healthz" in config
    assert web["environment"]["BENCHHUB_PROXY_HOPS"] == "1"
    assert web["environment"]["SECRET_KEY"] == "${SECRET_KEY:?set SECRET_KEY}"
    assert web["tmpfs"] == [web["environment"]["PROMETHEUS_MULTIPROC_DIR"]]


def test_compose_load_balancer_config_is_valid_haproxy():
    haproxy = shutil.which("haproxy")
    assert haproxy, "haproxy is missing: `make tools` installs it"
    done = subprocess.run(
        [haproxy, "-c", "-f", str(HAPROXY_CFG)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_load_test_runs_the_deployed_balancer_config_with_its_ports_templated(tmp_path):
    deployed = HAPROXY_CFG.read_text()
    rendered = render(deployed, port=8140, backends=[8141, 8142])
    lines = rendered.splitlines()
    assert "    bind 127.0.0.1:8140" in lines
    assert lines[-2:] == [
        "    server web1 127.0.0.1:8141 check",
        "    server web2 127.0.0.1:8142 check",
    ]
    assert "resolvers" not in rendered and "127.0.0.11" not in rendered
    # Everything else (time-outs, retries, the health check, the balancing) is deployed text.
    for line in balancer.RESOLVERS.sub("", deployed).splitlines():
        if "bind :8000" not in line and "server-template" not in line:
            assert line in lines
    config = tmp_path / "haproxy.cfg"
    config.write_text(rendered)
    haproxy = shutil.which("haproxy")
    assert haproxy, "haproxy is missing: `make tools` installs it"
    done = subprocess.run(
        [haproxy, "-c", "-f", str(config)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_nothing_a_request_needs_lives_on_one_web_host():
    from django.apps import apps
    from django.db.models import FileField

    assert settings.SESSION_ENGINE == "django.contrib.sessions.backends.db"
    assert str(settings.CACHES["default"]["BACKEND"]).endswith("RedisCache")
    assert settings.CELERY_BROKER_URL.startswith("redis://")
    assert "whitenoise" in settings.STORAGES["staticfiles"]["BACKEND"]
    # No model keeps a file on the local disk of the replica that received it.
    files = [
        f"{model.__name__}.{field.name}"
        for model in apps.get_models()
        for field in model._meta.get_fields()
        if isinstance(field, FileField)
    ]
    assert files == []
