#!/usr/bin/env python3
"""Renders the Kubernetes manifests and checks that they would run as written.

Every kustomization under deploy/kubernetes (the base, each overlay, the monitoring) is rendered with
`kubectl kustomize`, every object is validated against the Kubernetes schemas (kubernetes-validate, strict:
unknown fields are errors), and then what decides whether the worker runs at all is checked, since no
cluster is at hand: the worker's user can read its Secret files (fsGroup and mode), every credential file
the configuration names is a key of a mounted Secret, the probes ask /healthz and /readyz on the named metrics
port, metrics listen on the pod's addresses at that port, the Service lists the port by name, the PDB, HPA and
ServiceMonitor point at the workers, the PrometheusRule holds deploy/prometheus/alerts.yml's rules, and the
grace period outlasts the drain.

    scripts/check-deploy.py [--out DIR] [--kubectl PATH] [--prepare]

--out DIR writes each render to DIR/<name>.yaml (Tests/PushCoreTests/DeploymentFilesTests.swift loads the
worker configuration from them with the worker's own loader). Exit 0 when everything holds, 1 with one line
per failure otherwise, 2 when a tool is missing.

kubernetes-validate comes from PyPI into a virtualenv under ~/.cache (made on first use, shared by every
checkout; scripts/install-deps.sh makes it ahead of the tests); the script runs itself again inside it.
"""
import argparse
import fcntl
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KUBERNETES = ROOT / "deploy" / "kubernetes"
# The renders: name -> kustomization directory. Every overlay, the base itself, and the optional monitoring.
TARGETS = {
    "base": "base",
    "redis": "overlays/redis",
    "sentinel": "overlays/sentinel",
    "cluster": "overlays/cluster",
    "monitoring": "monitoring",
}
VALIDATOR = "kubernetes-validate==1.37.0"
VENV = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "push-pipeline" / "check-deploy-venv"
# What the worker needs after shutdown.timeout_s to return its claims, and some slack (DeploymentFilesTests).
EXIT_SLACK_SECONDS = 10
DEFAULT_METRICS_LISTEN = "127.0.0.1:9464"  # SPEC section 5
DEFAULT_SHUTDOWN_TIMEOUT = 25


def ensure_venv():
    """Runs this script again inside the virtualenv with kubernetes-validate, making it first if needed."""
    python = VENV / "bin" / "python"
    if Path(sys.prefix).resolve() == VENV.resolve():
        return
    VENV.parent.mkdir(parents=True, exist_ok=True)
    # Several checkouts may run this at once: one makes the virtualenv, the others wait for it.
    with open(VENV.parent / "check-deploy-venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        marker = VENV / ("installed-" + VALIDATOR.replace("==", "-"))
        if not marker.exists():
            print(f"check-deploy: installing {VALIDATOR} into {VENV}", file=sys.stderr)
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
            subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", VALIDATOR],
                           check=True)
            marker.touch()
    os.execv(str(python), [str(python), __file__] + sys.argv[1:])


class Checks:
    def __init__(self):
        self.failures = []

    def expect(self, condition, where, message):
        if not condition:
            self.failures.append(f"{where}: {message}")
        return condition


def render(kubectl, directory):
    result = subprocess.run([kubectl, "kustomize", str(KUBERNETES / directory)], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"kubectl kustomize {directory} failed: {result.stderr.strip()}")
    return result.stdout


def validate_schemas(checks, name, objects):
    import kubernetes_validate
    version = kubernetes_validate.latest_version()
    for obj in objects:
        where = f"{name}: {obj.get('kind')}/{obj.get('metadata', {}).get('name')}"
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.SchemaNotFoundError:
            # Custom resources have no schema in the package: they are checked field by field (check_monitoring).
            checks.expect(obj.get("kind") in ("ServiceMonitor", "PrometheusRule"), where, "no Kubernetes schema for this kind")
        except kubernetes_validate.ValidationError as error:
            checks.expect(False, where, f"schema: {error.message} at {'/'.join(str(p) for p in error.absolute_path)}")
    return version


def selects(selector, labels):
    match = (selector or {}).get("matchLabels", selector or {})
    return bool(match) and all(labels.get(k) == v for k, v in match.items())


def find(objects, kind, name=None):
    return [o for o in objects if o.get("kind") == kind and (name is None or o["metadata"]["name"] == name)]


def listen_address(value):
    """host, port of a metrics.listen value ('' is off)."""
    if not value:
        return None, None
    host, _, port = value.rpartition(":")
    return host.strip("[]"), int(port) if port.isdigit() else None


def container_environment(container, objects):
    """The variables the container sees: envFrom ConfigMaps first, then env literals, which win."""
    environment = {}
    for source in container.get("envFrom", []):
        ref = source.get("configMapRef")
        if ref:
            maps = find(objects, "ConfigMap", ref["name"])
            if maps:
                environment.update(maps[0].get("data", {}))
    for variable in container.get("env", []):
        if "value" in variable:
            environment[variable["name"]] = variable["value"]
    return environment


def credential_files(config):
    """(key, path) of every file the worker must read to authenticate, as the configuration names them."""
    files = []
    for index, app in enumerate((config.get("apns") or {}).get("apps") or []):
        for field in ("key_file", "cert_file"):
            if app.get(field):
                files.append((f"apns.apps.{index}.{field}", app[field]))
    for index, app in enumerate((config.get("fcm") or {}).get("apps") or []):
        if app.get("service_account_file"):
            files.append((f"fcm.apps.{index}.service_account_file", app["service_account_file"]))
    return files


def check_secret_readable(checks, where, volume, pod_security, container_security, objects):
    """The kubelet writes Secret files owned by root and, with fsGroup, by that group; the mode decides the rest."""
    secret = volume["secret"]
    user = container_security.get("runAsUser", pod_security.get("runAsUser"))
    group = container_security.get("runAsGroup", pod_security.get("runAsGroup"))
    fs_group = pod_security.get("fsGroup")
    groups = {g for g in [group, fs_group] + list(pod_security.get("supplementalGroups", [])) if g is not None}
    file_group = fs_group if fs_group is not None else 0
    modes = [item.get("mode", secret.get("defaultMode", 0o644)) for item in secret.get("items", [])] \
        or [secret.get("defaultMode", 0o644)]
    for mode in modes:
        readable = (mode & 0o004) or (user == 0 and mode & 0o400) or (file_group in groups and mode & 0o040)
        checks.expect(readable, where,
                      f"Secret volume {volume['name']} (mode {mode:04o}, files owned by 0:{file_group}) is not "
                      f"readable by the container's user {user} (groups {sorted(groups)}): set fsGroup and a "
                      f"group-readable mode such as 0440")
    checks.expect(bool(find(objects, "Secret", secret["secretName"])) or secret.get("optional"), where,
                  f"Secret {secret['secretName']} of volume {volume['name']} is not in the render")


def check_workers(checks, name, objects, expected_image):
    import yaml
    deployments = find(objects, "Deployment", "push-worker")
    if not checks.expect(len(deployments) == 1, name, "no Deployment push-worker"):
        return
    deployment = deployments[0]
    where = f"{name}: Deployment/push-worker"
    template = deployment["spec"]["template"]
    labels = template["metadata"].get("labels", {})
    pod = template["spec"]
    checks.expect(selects(deployment["spec"]["selector"], labels), where, "selector does not match the pod labels")
    containers = [c for c in pod["containers"] if c["name"] == "worker"]
    if not checks.expect(len(containers) == 1, where, "no container named worker"):
        return
    container = containers[0]
    pod_security = pod.get("securityContext", {})
    container_security = container.get("securityContext", {})
    user = container_security.get("runAsUser", pod_security.get("runAsUser"))
    checks.expect(user == 10001, where, f"runAsUser is {user}, not the image's push user 10001 (Dockerfile)")
    checks.expect(container.get("image") == expected_image, where,
                  f"image {container.get('image')} is not what deploy/docker-compose.yml builds ({expected_image})")

    # The configuration file: the ConfigMap mounted where --config points.
    args = container.get("args", [])
    config_path = args[args.index("--config") + 1] if "--config" in args else None
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = container.get("volumeMounts", [])
    config = {}
    for mount in mounts:
        volume = volumes.get(mount["name"], {})
        if config_path and "configMap" in volume and config_path.startswith(mount["mountPath"].rstrip("/") + "/"):
            maps = find(objects, "ConfigMap", volume["configMap"]["name"])
            key = config_path[len(mount["mountPath"].rstrip("/")) + 1:]
            if checks.expect(maps and key in maps[0].get("data", {}), where, f"{config_path} is not in a mounted ConfigMap"):
                config = yaml.safe_load(maps[0]["data"][key]) or {}
    checks.expect(bool(config), where, f"no configuration at --config {config_path}")
    environment = container_environment(container, objects)

    # Every Secret volume readable by the worker's user; every credential file a key of a mounted Secret.
    for mount in mounts:
        volume = volumes.get(mount["name"], {})
        if "secret" in volume:
            check_secret_readable(checks, where, volume, pod_security, container_security, objects)
    for key, path in credential_files(config):
        holders = [m for m in mounts if path.startswith(m["mountPath"].rstrip("/") + "/")]
        holder = holders[0] if holders else None
        volume = volumes.get(holder["name"], {}) if holder else {}
        if not checks.expect("secret" in volume, where, f"{key} {path} is not in a mounted Secret"):
            continue
        file_name = path[len(holder["mountPath"].rstrip("/")) + 1:]
        secrets = find(objects, "Secret", volume["secret"]["secretName"])
        items = volume["secret"].get("items")
        source = next((i["key"] for i in items if i["path"] == file_name), None) if items else file_name
        keys = set(secrets[0].get("data", {})) | set(secrets[0].get("stringData", {})) if secrets else set()
        checks.expect(source in keys, where, f"{key} {path}: Secret {volume['secret']['secretName']} has no key {file_name}")

    # Metrics, /healthz and /readyz: listening on the pod's addresses, on the port named `metrics`.
    listen = environment.get("METRICS_LISTEN", (config.get("metrics") or {}).get("listen", DEFAULT_METRICS_LISTEN))
    host, port = listen_address(listen)
    checks.expect(host in ("0.0.0.0", "::", ""), where, f"metrics listen on {listen}: the kubelet and Prometheus cannot reach it")
    named = {p.get("name"): p["containerPort"] for p in container.get("ports", [])}
    checks.expect(named.get("metrics") == port, where, f"no container port named metrics at {port} (metrics.listen {listen})")
    for probe_name, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz"), ("startupProbe", None)):
        probe = container.get(probe_name)
        if probe is None and path is None:
            continue
        http = (probe or {}).get("httpGet", {})
        checks.expect(http.get("path") == path if path else http.get("path") in ("/healthz", "/readyz"), where,
                      f"{probe_name} asks {http.get('path')}, not {path or '/healthz or /readyz'}")
        checks.expect(http.get("port") == "metrics", where, f"{probe_name} port {http.get('port')} is not the named port metrics")

    # The drain finishes before SIGKILL.
    timeout = int((config.get("shutdown") or {}).get("timeout_s", DEFAULT_SHUTDOWN_TIMEOUT))
    grace = pod.get("terminationGracePeriodSeconds", 30)
    checks.expect(grace >= timeout + EXIT_SLACK_SECONDS, where,
                  f"terminationGracePeriodSeconds {grace} < shutdown.timeout_s {timeout} + {EXIT_SLACK_SECONDS}")
    checks.expect("resources" in container and "requests" in container["resources"], where, "no resource requests")

    # The Service lists the metrics port by name; the PDB and the HPA point at these pods.
    services = [s for s in find(objects, "Service") if selects(s["spec"].get("selector"), labels)]
    ports = [p for s in services for p in s["spec"].get("ports", [])]
    checks.expect(any(p.get("name") == "metrics" and p.get("targetPort") in ("metrics", port) for p in ports),
                  f"{name}: Service", "no Service of the workers with a port named metrics targeting the metrics port")
    pdbs = find(objects, "PodDisruptionBudget")
    checks.expect(any(selects(p["spec"].get("selector"), labels) for p in pdbs), f"{name}: PodDisruptionBudget",
                  "none selects the workers")
    hpas = [h for h in find(objects, "HorizontalPodAutoscaler")
            if h["spec"]["scaleTargetRef"].get("kind") == "Deployment" and h["spec"]["scaleTargetRef"]["name"] == "push-worker"]
    if checks.expect(len(hpas) == 1, f"{name}: HorizontalPodAutoscaler", "none scales Deployment/push-worker"):
        checks.expect("replicas" not in deployment["spec"], where, "sets replicas, which the HorizontalPodAutoscaler owns")

    # Where Redis is: the overlay's variables.
    redis_where = f"{name}: redis"
    checks.expect("REDIS_URL" in environment or "redis" in config, redis_where, "no redis.url (REDIS_URL)")
    if name == "sentinel":
        checks.expect(environment.get("REDIS_SENTINEL_MASTER") and environment.get("REDIS_SENTINEL_NODES"),
                      redis_where, "no REDIS_SENTINEL_MASTER and REDIS_SENTINEL_NODES")
    if name == "cluster":
        checks.expect("," in environment.get("REDIS_URL", "") and environment.get("REDIS_SHARDS"), redis_where,
                      "a cluster needs several nodes in REDIS_URL and hash-tagged REDIS_SHARDS")


def check_monitoring(checks, objects, base_objects):
    service = find(base_objects, "Service", "push-worker")
    for monitor in find(objects, "ServiceMonitor"):
        where = f"monitoring: ServiceMonitor/{monitor['metadata']['name']}"
        spec = monitor.get("spec", {})
        checks.expect(service and selects(spec.get("selector"), service[0]["metadata"].get("labels", {})), where,
                      "does not select the base's Service push-worker")
        names = {p.get("name") for s in service for p in s["spec"].get("ports", [])}
        endpoints = spec.get("endpoints", [])
        checks.expect(endpoints and all(e.get("port") in names and e.get("path", "/metrics") == "/metrics" for e in endpoints),
                      where, f"endpoints must scrape /metrics on a named Service port ({sorted(names)})")
    # The rules as rendered must be the tested rule file's (scripts/check-alerts.sh tests that file).
    import yaml
    tested = yaml.safe_load((ROOT / "deploy" / "prometheus" / "alerts.yml").read_text())["groups"]
    rules = find(objects, "PrometheusRule")
    checks.expect(rules, "monitoring", "no PrometheusRule (deploy/prometheus/alerts.yml's rules)")
    for rule in rules:
        checks.expect(rule.get("spec", {}).get("groups") == tested, f"monitoring: PrometheusRule/{rule['metadata']['name']}",
                      "its groups differ from deploy/prometheus/alerts.yml: run scripts/gen-prometheusrule.py --write")


def compose_image():
    import yaml
    compose = yaml.safe_load((ROOT / "deploy" / "docker-compose.yml").read_text())
    return compose["x-worker"]["image"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", help="write each render to DIR/<name>.yaml")
    parser.add_argument("--kubectl", default="kubectl", help="the kubectl to render with")
    parser.add_argument("--prepare", action="store_true", help="only make the virtualenv (scripts/install-deps.sh)")
    options = parser.parse_args()
    ensure_venv()
    if options.prepare:
        return 0
    import shutil
    import yaml
    kubectl = shutil.which(options.kubectl)
    if kubectl is None:
        print("check-deploy: no kubectl (scripts/install-deps.sh installs Debian's kubernetes-client)", file=sys.stderr)
        return 2
    checks = Checks()
    renders = {}
    for name, directory in TARGETS.items():
        try:
            text = render(kubectl, directory)
        except RuntimeError as error:
            checks.expect(False, name, str(error))
            continue
        renders[name] = [o for o in yaml.safe_load_all(text) if o]
        if options.out:
            Path(options.out).mkdir(parents=True, exist_ok=True)
            (Path(options.out) / f"{name}.yaml").write_text(text)
    version = None
    image = compose_image()
    for name, objects in renders.items():
        version = validate_schemas(checks, name, objects)
        if name == "monitoring":
            check_monitoring(checks, objects, renders.get("base", []))
        else:
            check_workers(checks, name, objects, image)
    count = sum(len(o) for o in renders.values())
    for failure in checks.failures:
        print(f"FAIL {failure}")
    if checks.failures:
        print(f"check-deploy: {len(checks.failures)} failures in {len(renders)} renders ({count} objects)")
        return 1
    print(f"check-deploy: {len(renders)} renders ({', '.join(renders)}), {count} objects valid against the "
          f"Kubernetes {version} schemas; Secret access, probes, metrics port, Service, PDB, HPA, grace period, alert rules hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
