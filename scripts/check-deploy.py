#!/usr/bin/env python3
"""Renders the deployment files and checks that they would run as written.

Kubernetes: every kustomization under deploy/kubernetes (the base, each overlay, the ServiceMonitor, and each
component on each Redis overlay) is rendered with `kubectl kustomize` (which must print no warning), every
object is validated against the Kubernetes schemas (kubernetes-validate, strict: unknown fields are errors), no
kustomization uses a deprecated field, and then what decides whether the worker runs at all is checked, since
no cluster is at hand: the worker's user can read its Secret files (fsGroup and mode), every credential file
the configuration names is a key of a mounted Secret, the Deployment refers only to Secrets and ConfigMaps of
its own render and every one of them is used (an APNs-only variant mounts no FCM Secret), the configuration has
the apps of the variant's providers and no other, the probes ask /healthz and /readyz on the named metrics
port, metrics listen on the pod's addresses at that port, the Service lists the port by name, the PDB, HPA and
ServiceMonitor point at the workers, the PrometheusRule holds deploy/prometheus/alerts.yml's rules, the
grace period outlasts the drain, no service account token is mounted,
and the NetworkPolicies let in only the metrics port and let out exactly DNS, Redis and the providers' ports.

systemd: deploy/systemd/install.sh, staged into a temporary DESTDIR (with a stand-in binary: no build needed),
gives every instance the unit's header starts an environment file of its own, with its own WORKER_ID and
METRICS_LISTEN, and the unit requires that file. The image: the Dockerfile sets no METRICS_LISTEN (a mounted
configuration's metrics.listen decides), runs and health-checks the configuration it ships, and carries the
OCI labels, its version the worker's.

    scripts/check-deploy.py [--out DIR] [--kubectl PATH] [--prepare]

--out DIR writes each render of TARGETS to DIR/<name>.yaml (Tests/PushCoreTests/DeploymentFilesTests.swift loads
the worker configuration from them with the worker's own loader). Exit 0 when everything holds, 1 with one
line per failure otherwise, 2 when a tool is missing or too old (kubectl 1.21 or later is needed: components).

kubernetes-validate comes from PyPI into a virtualenv under ~/.cache (made on first use, shared by every
checkout; `scripts/install-deps.sh --tests`, which scripts/test.sh runs, makes it ahead of the tests); the
script runs itself again inside it.
"""
import argparse
import fcntl
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KUBERNETES = ROOT / "deploy" / "kubernetes"
# The renders: name -> (kustomization directory, the providers with apps, the Redis topology). Every overlay,
# the base itself (both providers, the redis overlay's Redis), and the optional monitoring.
TARGETS = {
    "base": ("base", {"apns", "fcm"}, "redis"),
    "redis": ("overlays/redis", {"apns", "fcm"}, "redis"),
    "sentinel": ("overlays/sentinel", {"apns", "fcm"}, "sentinel"),
    "cluster": ("overlays/cluster", {"apns", "fcm"}, "cluster"),
    "apns-only": ("overlays/apns-only", {"apns"}, "redis"),
    "fcm-only": ("overlays/fcm-only", {"fcm"}, "redis"),
    "monitoring": ("monitoring", None, None),
}
# The components (deploy/kubernetes/components/NAME) and the providers a render has once one is added. Each is
# also rendered on every Redis overlay, in a kustomization of its own made in a temporary directory.
COMPONENTS = {"apns-only": {"apns"}, "fcm-only": {"fcm"},
              "china-vendors": {"apns", "fcm", "huawei", "xiaomi", "honor", "oppo", "vivo"}}
PROVIDERS = ("apns", "fcm", "huawei", "xiaomi", "honor", "oppo", "vivo")
REDIS_OVERLAYS = ("redis", "sentinel", "cluster")
# Fields kustomize 5 deprecates (it warns, `kustomize edit fix` rewrites them), and what replaces each.
DEPRECATED_FIELDS = {
    "bases": "resources",
    "patchesStrategicMerge": "patches",
    "patchesJson6902": "patches",
    "commonLabels": "labels",
    "vars": "replacements",
    "imageTags": "images",
}
MINIMUM_KUBECTL = (1, 21)  # kustomize 4: components (kind: Component)
VALIDATOR = "kubernetes-validate==1.37.0"
VENV = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "push-pipeline" / "check-deploy-venv"
# What the worker needs after shutdown.timeout_s to return its claims, and some slack (DeploymentFilesTests).
EXIT_SLACK_SECONDS = 10
DEFAULT_METRICS_LISTEN = "127.0.0.1:9464"  # the worker's default metrics.listen
DEFAULT_SHUTDOWN_TIMEOUT = 25
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
# Ports the workers connect to besides Redis: DNS, and each provider's (APNs: 443, and Apple's alternative
# 2197, which the policy may allow though the worker uses 443 unless apns.endpoint names it; FCM and Google's
# token endpoint: 443).
DNS_PORTS = {("UDP", 53), ("TCP", 53)}
APNS_OPTIONAL_PORTS = {("TCP", 2197)}


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


def kubectl_version(kubectl):
    """(major, minor) of the kubectl client, or None when it does not say."""
    result = subprocess.run([kubectl, "version", "--client", "-o", "json"], capture_output=True, text=True)
    try:
        client = json.loads(result.stdout)["clientVersion"]
        return int(re.match(r"\d+", client["major"]).group()), int(re.match(r"\d+", client["minor"]).group())
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def render(kubectl, directory):
    """The rendered YAML of a kustomization directory; anything kubectl prints on stderr (a warning about a
    deprecated field, say) is a failure too."""
    result = subprocess.run([kubectl, "kustomize", str(directory)], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"kubectl kustomize {directory} failed: {result.stderr.strip()[:2000]}")
    if result.stderr.strip():
        raise RuntimeError(f"kubectl kustomize {directory} warns: {result.stderr.strip()[:2000]}")
    return result.stdout


def composite(workdir, overlay, component):
    """A kustomization in workdir that adds a component to an overlay (kustomize takes relative paths only)."""
    directory = Path(workdir) / f"{overlay}+{component}"
    directory.mkdir()
    relative = os.path.relpath(KUBERNETES, directory)
    (directory / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        f"resources:\n  - {relative}/overlays/{overlay}\ncomponents:\n  - {relative}/components/{component}\n")
    return directory


def check_kustomizations(checks):
    """Every kustomization file: no deprecated field, the right kind, and each one rendered by this script."""
    import yaml
    names = ("kustomization.yaml", "kustomization.yml", "Kustomization")
    files = sorted(f for f in KUBERNETES.rglob("*") if f.name in names)
    checks.expect(files, "deploy/kubernetes", "no kustomization files")
    rendered = {str(KUBERNETES / d) for d, _, _ in TARGETS.values()}
    for path in files:
        where = str(path.relative_to(ROOT))
        document = yaml.safe_load(path.read_text()) or {}
        for field, instead in DEPRECATED_FIELDS.items():
            checks.expect(field not in document, where, f"deprecated field `{field}:` (use `{instead}:`)")
        directory = path.parent
        if directory.parent == KUBERNETES / "components":
            checks.expect(document.get("kind") == "Component"
                          and document.get("apiVersion") == "kustomize.config.k8s.io/v1alpha1", where,
                          "a component must be kind: Component, apiVersion: kustomize.config.k8s.io/v1alpha1")
            checks.expect(directory.name in COMPONENTS, where, "a component this script does not render (COMPONENTS)")
        else:
            checks.expect(document.get("kind") == "Kustomization"
                          and document.get("apiVersion") == "kustomize.config.k8s.io/v1beta1", where,
                          "must be kind: Kustomization, apiVersion: kustomize.config.k8s.io/v1beta1")
            checks.expect(str(directory) in rendered, where, "an overlay this script does not render (TARGETS)")


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
    """(key, path) of every file the worker must read to authenticate, as the configuration names them: each app's
    keys that name a file (key_file, cert_file, service_account_file, client_secret_file, app_secret_file, ...),
    in every provider's block."""
    files = []
    for provider in PROVIDERS:
        for index, app in enumerate((config.get(provider) or {}).get("apps") or []):
            for field, value in app.items():
                if field.endswith("_file") and value:
                    files.append((f"{provider}.apps.{index}.{field}", value))
    return files


def check_secret_readable(checks, where, volume, pod_security, container_security):
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


def references(pod):
    """(kind, name, where) of every Secret and ConfigMap the pod refers to: volumes (projected ones too), envFrom,
    env valueFrom and imagePullSecrets."""
    found = []
    for volume in pod.get("volumes", []):
        if "secret" in volume:
            found.append(("Secret", volume["secret"].get("secretName"), f"volume {volume['name']}"))
        if "configMap" in volume:
            found.append(("ConfigMap", volume["configMap"].get("name"), f"volume {volume['name']}"))
        for source in (volume.get("projected") or {}).get("sources", []):
            for key, kind in (("secret", "Secret"), ("configMap", "ConfigMap")):
                if key in source:
                    found.append((kind, source[key].get("name"), f"projected volume {volume['name']}"))
    for container in pod.get("containers", []) + pod.get("initContainers", []):
        for source in container.get("envFrom", []):
            for key, kind in (("secretRef", "Secret"), ("configMapRef", "ConfigMap")):
                if key in source:
                    found.append((kind, source[key].get("name"), f"envFrom of container {container['name']}"))
        for variable in container.get("env", []):
            value_from = variable.get("valueFrom") or {}
            for key, kind in (("secretKeyRef", "Secret"), ("configMapKeyRef", "ConfigMap")):
                if key in value_from:
                    found.append((kind, value_from[key].get("name"), f"env {variable['name']}"))
    for secret in pod.get("imagePullSecrets", []):
        found.append(("Secret", secret.get("name"), "imagePullSecrets"))
    return found


def configured_providers(config):
    """The providers the configuration has apps for (the worker starts those and only those)."""
    return {provider for provider in PROVIDERS if (config.get(provider) or {}).get("apps")}


def without_providers(config):
    """The configuration but its providers' blocks: what every variant shares with the base."""
    return {key: value for key, value in config.items() if key not in PROVIDERS}


def url_port(url, default):
    """The port of an https:// or redis:// address (default when it names none)."""
    authority = url.split("://", 1)[-1].split("/", 1)[0].rpartition("@")[2]
    host, _, port = authority.rpartition(":")
    return int(port) if host and port.isdigit() else default


def redis_ports(environment, config):
    """The TCP ports of every Redis address the worker is given: each node of redis.url and, with Sentinel, each
    sentinel (the primary they name is taken to listen where redis.url says, 6379 by default)."""
    redis = config.get("redis") or {}
    url = environment.get("REDIS_URL") or redis.get("url") or DEFAULT_REDIS_URL
    authority = url.split("://", 1)[-1].split("/", 1)[0].rpartition("@")[2]
    ports = {url_port("redis://" + node, 6379) for node in authority.split(",") if node}
    nodes = environment.get("REDIS_SENTINEL_NODES")
    nodes = nodes.split(",") if nodes is not None else list((redis.get("sentinel") or {}).get("nodes") or [])
    ports |= {url_port("redis://" + node.strip(), 26379) for node in nodes if node.strip()}
    return ports


def provider_ports(config, environment):
    """(required, allowed) egress ports of the configured providers: their endpoints (and FCM's token endpoint)."""
    required, allowed = set(), set()
    providers = configured_providers(config)
    if "apns" in providers:
        endpoint = environment.get("APNS_ENDPOINT") or (config.get("apns") or {}).get("endpoint") or "production"
        required.add(("TCP", 443 if endpoint in ("production", "sandbox") else url_port(endpoint, 443)))
        allowed |= APNS_OPTIONAL_PORTS
    if "fcm" in providers:
        fcm = config.get("fcm") or {}
        required.add(("TCP", url_port(environment.get("FCM_ENDPOINT") or fcm.get("endpoint") or "https://fcm.googleapis.com", 443)))
        # The token endpoint: fcm.token_uri, or each service account file's token_uri (Google's, on 443).
        required.add(("TCP", url_port(environment.get("FCM_TOKEN_URI") or fcm.get("token_uri") or "https://oauth2.googleapis.com/token", 443)))
    if "huawei" in providers:
        huawei = config.get("huawei") or {}
        required.add(("TCP", url_port(environment.get("HUAWEI_ENDPOINT") or huawei.get("endpoint") or "https://push-api.cloud.huawei.com", 443)))
        required.add(("TCP", url_port(environment.get("HUAWEI_TOKEN_URI") or huawei.get("token_uri") or "https://oauth-login.cloud.huawei.com/oauth2/v3/token", 443)))
    if "xiaomi" in providers:
        xiaomi = config.get("xiaomi") or {}
        required.add(("TCP", url_port(environment.get("XIAOMI_ENDPOINT") or xiaomi.get("endpoint") or "https://api.xmpush.xiaomi.com", 443)))
    return required, allowed | required


def policy_types(policy):
    spec = policy.get("spec", {})
    return set(spec.get("policyTypes") or (["Ingress"] + (["Egress"] if "egress" in spec else [])))


def check_network_policies(checks, name, objects, labels, metrics_port, required, allowed):
    """The NetworkPolicies selecting the workers (they add up): ingress only to the metrics port, egress to
    exactly the required ports (DNS, Redis, the providers) and nothing beyond what is allowed."""
    where = f"{name}: NetworkPolicy"
    def selects_workers(policy):
        selector = policy["spec"].get("podSelector") or {}
        everyone = not selector.get("matchLabels") and not selector.get("matchExpressions")
        return everyone or selects(selector, labels)
    policies = [p for p in find(objects, "NetworkPolicy") if selects_workers(p)]
    checks.expect(any("Ingress" in policy_types(p) for p in policies), where,
                  "none restricts the workers' ingress (policyTypes Ingress)")
    checks.expect(any("Egress" in policy_types(p) for p in policies), where,
                  "none restricts the workers' egress (policyTypes Egress)")
    egress = set()
    for policy in policies:
        policy_where = f"{where}/{policy['metadata']['name']}"
        for rule in policy["spec"].get("ingress") or []:
            ports = rule.get("ports") or []
            checks.expect(ports, policy_where, "an ingress rule without ports lets in every port")
            for port in ports:
                checks.expect(port.get("port") in ("metrics", metrics_port) and port.get("protocol", "TCP") == "TCP"
                              and "endPort" not in port, policy_where,
                              f"ingress to {port.get('protocol', 'TCP')} {port.get('port')}: only the metrics port "
                              f"({metrics_port}, named metrics) may be reached")
        for rule in policy["spec"].get("egress") or []:
            ports = rule.get("ports") or []
            checks.expect(ports, policy_where, "an egress rule without ports lets out every port")
            for port in ports:
                checks.expect("endPort" not in port, policy_where, f"egress to a port range from {port.get('port')}")
                egress.add((port.get("protocol", "TCP"), port.get("port")))
    def named(ports):
        return ", ".join(f"{protocol} {port}" for protocol, port in sorted(ports, key=str))
    missing = required - egress
    checks.expect(not missing, where, f"egress to {named(missing)} is not allowed: the worker could not reach "
                  "DNS, Redis or a provider it is configured for")
    extra = egress - allowed
    checks.expect(not extra, where, f"egress to {named(extra)} is allowed, which this variant does not use")


def check_workers(checks, name, objects, expected_image, providers, topology, base_config=None):
    """The worker Deployment of one render; returns its configuration."""
    import yaml
    deployments = find(objects, "Deployment", "push-worker")
    if not checks.expect(len(deployments) == 1, name, "no Deployment push-worker"):
        return {}
    deployment = deployments[0]
    where = f"{name}: Deployment/push-worker"
    template = deployment["spec"]["template"]
    labels = template["metadata"].get("labels", {})
    pod = template["spec"]
    checks.expect(selects(deployment["spec"]["selector"], labels), where, "selector does not match the pod labels")
    containers = [c for c in pod["containers"] if c["name"] == "worker"]
    if not checks.expect(len(containers) == 1, where, "no container named worker"):
        return {}
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
            check_secret_readable(checks, where, volume, pod_security, container_security)
    # The Deployment refers only to Secrets and ConfigMaps of this render (a variant without FCM mounts no FCM
    # Secret), and every Secret and ConfigMap of the render is one it refers to.
    referred = references(pod)
    for kind, ref, source in referred:
        checks.expect(bool(find(objects, kind, ref)), where, f"{source} refers to {kind} {ref}, which this render does not have")
    for kind in ("Secret", "ConfigMap"):
        for obj in find(objects, kind):
            checks.expect(any(k == kind and n == obj["metadata"]["name"] for k, n, _ in referred), f"{name}: {kind}/{obj['metadata']['name']}",
                          "in the render but not used by the Deployment")
    # The configuration has apps for this variant's providers and for no other.
    configured = configured_providers(config)
    checks.expect(configured == providers, where,
                  f"the configuration has apps for {sorted(configured) or 'no provider'}, the variant is {sorted(providers)}")
    if base_config is not None:
        checks.expect(without_providers(config) == without_providers(base_config), where,
                      "the configuration differs from base/worker.yaml outside the providers' blocks")
    # Every mounted Secret holds a credential file the configuration names.
    credentials = credential_files(config)
    for mount in mounts:
        volume = volumes.get(mount["name"], {})
        if "secret" in volume:
            prefix = mount["mountPath"].rstrip("/") + "/"
            checks.expect(any(path.startswith(prefix) for _, path in credentials), where,
                          f"mounts Secret {volume['secret'].get('secretName')} at {mount['mountPath']}, where the "
                          f"configuration names no credential file")
    # No service account token: the worker never talks to the Kubernetes API.
    checks.expect(pod.get("automountServiceAccountToken") is False, where,
                  "automountServiceAccountToken is not false: the pod would carry a token for the Kubernetes API")
    for key, path in credentials:
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

    # NetworkPolicies: in, the metrics port only; out, DNS, Redis and this variant's providers.
    required, allowed = provider_ports(config, environment)
    required |= DNS_PORTS | {("TCP", port) for port in redis_ports(environment, config)}
    check_network_policies(checks, name, objects, labels, port, required, allowed | required)

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
    if topology == "sentinel":
        checks.expect(environment.get("REDIS_SENTINEL_MASTER") and environment.get("REDIS_SENTINEL_NODES"),
                      redis_where, "no REDIS_SENTINEL_MASTER and REDIS_SENTINEL_NODES")
    if topology == "cluster":
        checks.expect("," in environment.get("REDIS_URL", "") and environment.get("REDIS_SHARDS"), redis_where,
                      "a cluster needs several nodes in REDIS_URL and hash-tagged REDIS_SHARDS")
    return config


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


def environment_file(path):
    """KEY=VALUE lines of a systemd EnvironmentFile (comments and blank lines skipped, quotes removed)."""
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith(("#", ";")) and "=" in line:
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip().strip('"\'')
    return values


def check_systemd(checks):
    """install.sh staged with a stand-in binary: every instance the unit's header starts has an environment file
    of its own, with its own WORKER_ID and metrics port, and the unit requires that file (were it optional, an
    instance without one would take worker.yaml's metrics.listen, the same port as every other, and fail)."""
    import yaml
    where = "systemd"
    unit_path = ROOT / "deploy" / "systemd" / "push-worker@.service"
    unit = unit_path.read_text()
    header = "\n".join(line for line in unit.splitlines() if line.startswith("#"))
    instances = re.findall(r"push-worker@([A-Za-z0-9_-]+)", header)
    checks.expect(len(instances) >= 2, where, "the unit's header does not start two instances (systemctl enable --now push-worker@1 push-worker@2)")
    environment_files = re.findall(r"^EnvironmentFile=(\S+)", unit, re.MULTILINE)
    if not checks.expect(len(environment_files) == 1, where, "the unit needs one EnvironmentFile= per instance (%i)"):
        return
    pattern = environment_files[0]
    checks.expect(not pattern.startswith("-"), where, f"EnvironmentFile={pattern} is optional: an instance without "
                  "its file would listen on worker.yaml's metrics port, which another instance holds")
    pattern = pattern.lstrip("-")
    checks.expect("%i" in pattern, where, f"EnvironmentFile={pattern} is not per instance (%i)")
    with tempfile.TemporaryDirectory() as stage:
        binary = Path(stage) / "worker-stand-in"
        binary.write_text("#!/bin/sh\necho 'worker (stand-in for check-deploy.py)'\n")
        binary.chmod(0o755)
        destdir = Path(stage) / "root"
        result = subprocess.run(["bash", str(ROOT / "deploy" / "systemd" / "install.sh"), "--binary", str(binary)],
                                env=dict(os.environ, DESTDIR=str(destdir)), capture_output=True, text=True)
        if not checks.expect(result.returncode == 0, where, f"install.sh (DESTDIR) exited {result.returncode}: {result.stderr.strip()}"):
            return
        config_path = re.search(r"--config\s+(\S+)", unit)
        config = {}
        if checks.expect(config_path, where, "ExecStart gives no --config"):
            staged = destdir / config_path.group(1).lstrip("/")
            if checks.expect(staged.exists(), where, f"install.sh installs no {config_path.group(1)}"):
                config = yaml.safe_load(staged.read_text()) or {}
        file_listen = (config.get("metrics") or {}).get("listen", DEFAULT_METRICS_LISTEN)
        listens, ids = {}, {}
        for instance in instances:
            path = destdir / pattern.replace("%i", instance).lstrip("/")
            if not checks.expect(path.exists(), where, f"instance {instance}: install.sh installs no {pattern.replace('%i', instance)}"):
                continue
            values = environment_file(path)
            listen = values.get("METRICS_LISTEN", file_listen)
            port = listen_address(listen)[1]
            checks.expect(port, where, f"instance {instance}: no metrics port ({listen})")
            checks.expect(values.get("WORKER_ID"), where, f"instance {instance}: no WORKER_ID of its own")
            for other, other_port in listens.items():
                checks.expect(port != other_port, where, f"instances {other} and {instance} both listen on metrics port {port}")
            for other, other_id in ids.items():
                checks.expect(values.get("WORKER_ID") != other_id, where, f"instances {other} and {instance} share WORKER_ID {other_id}")
            listens[instance], ids[instance] = port, values.get("WORKER_ID")
    return len(listens)


def dockerfile_instructions():
    """(INSTRUCTION, arguments) of the Dockerfile's final stage, continuation lines joined."""
    lines, current = [], ""
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.lstrip().startswith("#"):
            continue
        current += line.rstrip()
        if current.endswith("\\"):
            current = current[:-1] + " "
            continue
        lines.append(current.strip())
        current = ""
    final = max(i for i, line in enumerate(lines) if line.upper().startswith("FROM "))
    return [tuple((line.split(None, 1) + [""])[:2]) for line in lines[final:]]


def check_image(checks):
    """The runtime image: no METRICS_LISTEN of its own (a mounted configuration decides), CMD and HEALTHCHECK read
    the configuration the image ships (listening on every address) or one mounted over it, and the OCI labels,
    the version an ARG defaulting to the worker's."""
    import shlex
    import yaml
    where = "Dockerfile"
    instructions = dockerfile_instructions()
    def argument(name):
        return [a for i, a in instructions if i.upper() == name]
    for env in argument("ENV"):
        checks.expect("METRICS_LISTEN" not in env, where, f"ENV {env}: the image's environment would win over "
                      "metrics.listen in a mounted configuration")
    def config_of(text):
        words = json.loads(text) if text.strip().startswith("[") else shlex.split(text)
        return words[words.index("--config") + 1] if "--config" in words else None
    cmd = argument("CMD")
    healthcheck = argument("HEALTHCHECK")
    run_config = config_of(cmd[-1]) if cmd else None
    health_config = config_of(healthcheck[-1].split("CMD", 1)[-1]) if healthcheck else None
    checks.expect(run_config, where, "CMD runs without --config: a mounted configuration would not be read")
    checks.expect(health_config == run_config, where,
                  f"HEALTHCHECK reads --config {health_config}, CMD runs --config {run_config}: they would ask different ports")
    copied = [a.split() for a in argument("COPY") if not a.startswith("--from")]
    source = next((words[0] for words in copied if len(words) == 2 and words[1] == run_config), None)
    if checks.expect(source, where, f"the image ships no {run_config} (COPY): `docker run` without a mount has no configuration"):
        listen = ((yaml.safe_load((ROOT / source).read_text()) or {}).get("metrics") or {}).get("listen", DEFAULT_METRICS_LISTEN)
        checks.expect(listen_address(listen)[0] in ("0.0.0.0", "::", ""), where,
                      f"{source} listens on {listen}: not reachable from outside the container")
    labels = {}
    for text in argument("LABEL"):
        for word in shlex.split(text):
            key, _, value = word.partition("=")
            labels[key] = value
    arguments = dict((a.split("=", 1) + [""])[:2] for a in argument("ARG"))
    for key in ("title", "source", "licenses", "version"):
        checks.expect(f"org.opencontainers.image.{key}" in labels, where, f"no LABEL org.opencontainers.image.{key}")
    license_text = (ROOT / "LICENSE").read_text()
    checks.expect(labels.get("org.opencontainers.image.licenses") == "Apache-2.0" and "Apache License" in license_text
                  and "Version 2.0" in license_text, where, "org.opencontainers.image.licenses is not the LICENSE's Apache-2.0")
    checks.expect(labels.get("org.opencontainers.image.version") in ("${VERSION}", "$VERSION"), where,
                  "org.opencontainers.image.version does not come from ARG VERSION")
    build_info = re.search(r'version = "([^"]+)"', (ROOT / "Sources" / "PushCore" / "Metrics" / "BuildInfo.swift").read_text())
    checks.expect(build_info and arguments.get("VERSION") == build_info.group(1), where,
                  f"ARG VERSION={arguments.get('VERSION')} in the final stage is not the worker's version "
                  f"({build_info.group(1) if build_info else '?'}, Sources/PushCore/Metrics/BuildInfo.swift)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", help="write each render of TARGETS to DIR/<name>.yaml")
    parser.add_argument("--kubectl", default="kubectl", help="the kubectl to render with (1.21 or later)")
    parser.add_argument("--prepare", action="store_true", help="only make the virtualenv (scripts/install-deps.sh --tests)")
    options = parser.parse_args()
    ensure_venv()
    if options.prepare:
        return 0
    import shutil
    import yaml
    kubectl = shutil.which(options.kubectl)
    if kubectl is None:
        print("check-deploy: no kubectl: put kubectl 1.21 or later on PATH, or pass --kubectl PATH", file=sys.stderr)
        return 2
    version = kubectl_version(kubectl)
    if version is None or version < MINIMUM_KUBECTL:
        print(f"check-deploy: {kubectl} is kubectl {'.'.join(map(str, version)) if version else '(version unknown)'}; the "
              f"manifests use Kustomize components, which need kubectl {'.'.join(map(str, MINIMUM_KUBECTL))} or later "
              "(kustomize 4+; Debian 12's kubernetes-client, kubectl 1.20, is too old): put one on PATH or pass --kubectl PATH",
              file=sys.stderr)
        return 2
    checks = Checks()
    check_kustomizations(checks)
    renders, variants = {}, {}
    with tempfile.TemporaryDirectory() as workdir:
        jobs = [(name, KUBERNETES / directory, providers, topology, True)
                for name, (directory, providers, topology) in TARGETS.items()]
        jobs += [(f"{overlay}+{component}", composite(workdir, overlay, component), COMPONENTS[component], overlay, False)
                 for overlay in REDIS_OVERLAYS for component in COMPONENTS]
        for name, directory, providers, topology, written in jobs:
            try:
                text = render(kubectl, directory)
            except RuntimeError as error:
                checks.expect(False, name, str(error))
                continue
            renders[name] = [o for o in yaml.safe_load_all(text) if o]
            variants[name] = (providers, topology)
            if options.out and written:
                Path(options.out).mkdir(parents=True, exist_ok=True)
                (Path(options.out) / f"{name}.yaml").write_text(text)
    schema_version = None
    image = compose_image()
    base_config = None
    for name, objects in renders.items():
        schema_version = validate_schemas(checks, name, objects)
        providers, topology = variants[name]
        if providers is None:
            check_monitoring(checks, objects, renders.get("base", []))
        elif name == "base":
            base_config = check_workers(checks, name, objects, image, providers, topology)
        else:
            check_workers(checks, name, objects, image, providers, topology, base_config)
    instances = check_systemd(checks)
    check_image(checks)
    count = sum(len(o) for o in renders.values())
    for failure in checks.failures:
        print(f"FAIL {failure}")
    if checks.failures:
        print(f"check-deploy: {len(checks.failures)} failures in {len(renders)} renders ({count} objects)")
        return 1
    print(f"check-deploy: {len(renders)} renders ({', '.join(renders)}) with kubectl {'.'.join(map(str, version))}, "
          f"{count} objects valid against the Kubernetes {schema_version} schemas; no deprecated kustomization field; "
          f"Secret access and use, providers, probes, metrics port, Service, PDB, HPA, NetworkPolicies, no service "
          f"account token, grace period, alert rules hold; systemd: {instances} instances with their own metrics ports; image: "
          f"configuration, health check and OCI labels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
