#!/usr/bin/env python3
"""Offline checks of the deployment files in deploy/ (run by ./deploy/test.sh).

Parses every YAML file and checks structure that a cluster or Docker would only reject (or,
worse, accept) at deploy time: probes, resources and disruption budgets on every Deployment,
selectors and ports that match, the edge routing of both plugin prefixes to ingest, an edge
that sets X-Forwarded-For itself and never routes /metrics or /readyz from outside, files the
compose file mounts, the Dockerfile's stages, and docs/self-hosting.md's admin commands (the
image ships each binary they exec, the service they run in has the variables they need). Runs `docker compose config -q` when the
compose plugin is installed (no engine needed); otherwise says so and skips only that check.

    python3 deploy/validate_deploy.py   # exit 1 and one line per problem when something is off
"""

import os
import re
import shlex
import shutil
import subprocess
import sys

import yaml

DEPLOY = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(DEPLOY)
problems = []


def check(ok, message):
    if not ok:
        problems.append(message)
    return ok


def load_all(path):
    with open(path) as f:
        return [doc for doc in yaml.safe_load_all(f) if doc is not None]


def labels_match(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def check_k8s():
    k8s = os.path.join(DEPLOY, "k8s")
    docs = {}
    for name in sorted(os.listdir(k8s)):
        if name.endswith((".yaml", ".yml")):
            docs[name] = load_all(os.path.join(k8s, name))
    kustomization = docs.pop("kustomization.yaml", [{}])[0]
    for resource in kustomization.get("resources", []):
        check(os.path.exists(os.path.join(k8s, resource)), f"kustomization: {resource} missing")
    values = docs.pop("nats-values.yaml", [{}])[0]
    config = values.get("config", {})
    check(config.get("cluster", {}).get("enabled") and config["cluster"].get("replicas") == 3,
          "nats-values: cluster must be enabled with 3 replicas")
    js = config.get("jetstream", {})
    check(js.get("enabled") and js.get("fileStore", {}).get("enabled"),
          "nats-values: JetStream with file storage")
    check("max_payload" in config.get("merge", {}), "nats-values: max_payload must be raised")

    objects = [(name, doc) for name, items in docs.items() for doc in items]
    by_kind = {}
    for name, doc in objects:
        check("kind" in doc and "apiVersion" in doc, f"{name}: object without kind/apiVersion")
        by_kind.setdefault(doc.get("kind"), []).append(doc)
    clusters = by_kind.get("Cluster", [])
    check(any(c["apiVersion"].startswith("postgresql.cnpg.io/") and c["spec"].get("instances") == 3
              for c in clusters), "postgres-cluster: a CloudNativePG Cluster with 3 instances")
    known = {(d["kind"], d["metadata"]["name"]) for _, d in objects}
    # Secrets the CloudNativePG operator creates for each Cluster.
    known |= {("Secret", c["metadata"]["name"] + "-app") for c in clusters}

    deployments = by_kind.get("Deployment", [])
    check({d["metadata"]["name"] for d in deployments} >= {"ingest", "query-api", "projector", "notifier"},
          "k8s: Deployments for ingest, query-api, projector and notifier")
    pdbs = by_kind.get("PodDisruptionBudget", [])
    for d in deployments:
        name, spec = d["metadata"]["name"], d["spec"]
        pod = spec["template"]
        check(labels_match(spec["selector"]["matchLabels"], pod["metadata"]["labels"]),
              f"{name}: selector does not match the pod labels")
        for c in pod["spec"]["containers"]:
            where = f"{name}/{c['name']}"
            ports = {p.get("name") for p in c.get("ports", [])}
            for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
                http = c.get(probe, {}).get("httpGet", {})
                check(http.get("path") == path, f"{where}: {probe} on {path}")
                check(http.get("port") in ports, f"{where}: {probe} port is not a container port")
            resources = c.get("resources", {})
            check({"cpu", "memory"} <= set(resources.get("requests", {})),
                  f"{where}: cpu and memory requests")
            check("memory" in resources.get("limits", {}), f"{where}: memory limit")
            for source in c.get("envFrom", []):
                ref = source.get("configMapRef") or source.get("secretRef") or {}
                kind = "ConfigMap" if "configMapRef" in source else "Secret"
                check((kind, ref.get("name")) in known, f"{where}: unknown {kind} {ref.get('name')}")
            for env in c.get("env", []):
                ref = env.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    check(("Secret", ref["name"]) in known, f"{where}: unknown Secret {ref['name']}")
            check_keys(where, name, {env.get("name") for env in c.get("env", [])})
        if spec.get("replicas", 1) > 1:
            check(any(labels_match(p["spec"]["selector"]["matchLabels"], pod["metadata"]["labels"])
                      for p in pdbs), f"{name}: {spec['replicas']} replicas but no PodDisruptionBudget")

    services = {s["metadata"]["name"]: s for s in by_kind.get("Service", [])}
    for name, s in services.items():
        targets = [d for d in deployments
                   if labels_match(s["spec"]["selector"], d["spec"]["template"]["metadata"]["labels"])]
        if check(targets, f"Service {name}: selects no Deployment"):
            ports = {p.get("name") for c in targets[0]["spec"]["template"]["spec"]["containers"]
                     for p in c.get("ports", [])}
            for p in s["spec"]["ports"]:
                check(p.get("targetPort") in ports, f"Service {name}: targetPort {p.get('targetPort')}")
    routes = {}
    for ingress in by_kind.get("Ingress", []):
        for rule in ingress["spec"]["rules"]:
            for path in rule["http"]["paths"]:
                service = path["backend"]["service"]["name"]
                check(service in services, f"Ingress: unknown Service {service}")
                routes[path["path"]] = service
                for ops in OPS_PATHS:
                    check(not ingress_matches(path["path"], path.get("pathType"), ops),
                          f"Ingress: {path['path']} routes {ops}, which must not be reachable from outside")
    check_routes("Ingress", routes, ("/api/", "/events", "/assets/", "/", "/login", "/players",
                                     "/punishments", "/anticheat", "/chat", "/overview", "/alerts"))


# Readiness and metrics: for probes and Prometheus inside the cluster, never routed by the edge.
OPS_PATHS = ("/metrics", "/readyz")


def ingress_matches(path, path_type, request_path):
    """Whether an Ingress path of `path_type` matches `request_path` (Kubernetes semantics)."""
    if path_type == "Exact":
        return path == request_path
    # Prefix (and ImplementationSpecific, read as Prefix): whole path elements.
    prefix = path.rstrip("/")
    return prefix == "" or request_path == prefix or request_path.startswith(prefix + "/")


def check_routes(what, routes, to_query_api):
    for prefix in ("/api/plugin/", "/api/v1/plugin/"):
        check(routes.get(prefix) == "ingest", f"{what}: {prefix} must go to ingest")
    for path in to_query_api:
        check(routes.get(path) in ("query-api", "query_api"), f"{what}: {path} must go to query-api")


# The operator's keys each service reads: a service is given the ones it needs and no other
# (the projector and the notifier serve no API, so they never hold ADMIN_KEY; only query-api,
# which seals webhook signing secrets, and the notifier, which opens them, hold
# WEBHOOK_SECRETS_KEY). Every service seals or opens the log's personal fields, so every one
# holds PRIVACY_MASTER_KEY.
KEYS_NEEDED = {
    "ingest": {"ADMIN_KEY", "IP_HASH_KEY", "PRIVACY_MASTER_KEY"},
    "query-api": {"ADMIN_KEY", "WEBHOOK_SECRETS_KEY", "PRIVACY_MASTER_KEY"},
    "projector": {"PRIVACY_MASTER_KEY"},
    "notifier": {"WEBHOOK_SECRETS_KEY", "PRIVACY_MASTER_KEY"},
}
KEYS = {"ADMIN_KEY", "IP_HASH_KEY", "WEBHOOK_SECRETS_KEY", "PRIVACY_MASTER_KEY"}
KEYS_ALLOWED = {"query-api": {"IP_HASH_KEY"}}  # optional there: the audit log's IP hashes


def check_keys(where, service, names):
    if service not in KEYS_NEEDED:
        return
    given = names & KEYS
    for key in sorted(KEYS_NEEDED[service] - given):
        check(False, f"{where}: {key} is not given")
    for key in sorted(given - KEYS_NEEDED[service] - KEYS_ALLOWED.get(service, set())):
        check(False, f"{where}: is given {key}, which it does not need")


def check_compose():
    path = os.path.join(DEPLOY, "compose.yaml")
    compose = load_all(path)[0]
    services = compose.get("services", {})
    for name in ("nats-1", "nats-2", "nats-3", "postgres", "ingest", "projector", "notifier", "query-api",
                 "edge"):
        check(name in services, f"compose: service {name} missing")
    check(services.get("ingest", {}).get("deploy", {}).get("replicas") == 2, "compose: ingest x2")
    for name, service in services.items():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                check(os.path.exists(os.path.join(DEPLOY, source)),
                      f"compose: {name} mounts {source}, which does not exist")
        build = service.get("build")
        if build:
            dockerfile = os.path.join(DEPLOY, build["context"], build["dockerfile"])
            check(os.path.exists(dockerfile), f"compose: {name} builds from a missing Dockerfile")
        for dependency in service.get("depends_on", {}):
            check(dependency in services, f"compose: {name} depends on unknown {dependency}")
        check_keys(f"compose: {name}", name, set(service.get("environment", {})))
    for i in (1, 2, 3):
        conf = open(os.path.join(DEPLOY, "nats", f"nats-{i}.conf")).read()
        check("sync_interval: always" in conf, f"nats-{i}.conf: sync_interval: always")
        check(re.search(r"max_payload:\s*8MB", conf), f"nats-{i}.conf: max_payload 8MB")
        for j in (1, 2, 3):
            check(f"nats-route://nats-{j}:6222" in conf, f"nats-{i}.conf: no route to nats-{j}")


def check_nginx():
    conf = open(os.path.join(DEPLOY, "nginx", "warden.conf")).read()
    conf = re.sub(r"#.*", "", conf)
    routes = {m.group(1): m.group(2)
              for m in re.finditer(r"location\s+(\S+)\s*\{[^}]*?proxy_pass\s+http://([\w-]+)", conf)}
    check_routes("nginx", routes, ("/",))
    # The edge names the client itself; appending would pass on what the client wrote.
    check(re.search(r"proxy_set_header\s+X-Forwarded-For\s+\$remote_addr\s*;", conf),
          "nginx: proxy_set_header X-Forwarded-For $remote_addr (the edge sets the client address)")
    check("$proxy_add_x_forwarded_for" not in conf,
          "nginx: $proxy_add_x_forwarded_for keeps the client's own X-Forwarded-For entries")
    for ops in OPS_PATHS:
        block = re.search(r"location\s*=\s*" + re.escape(ops) + r"\s*\{([^}]*)\}", conf)
        check(block and re.search(r"return\s+404\b", block.group(1)) and "proxy_pass" not in block.group(1),
              f"nginx: location = {ops} must return 404 (ops endpoints stay inside)")
    check(re.search(r"upstream\s+ingest\s*\{[^}]*server\s+ingest:8081", conf),
          "nginx: upstream ingest must point at ingest:8081")


def check_dockerfile():
    lines = open(os.path.join(DEPLOY, "Dockerfile")).read().splitlines()
    froms = [line for line in lines if line.startswith("FROM ")]
    check(len(froms) >= 2, "Dockerfile: multi-stage")
    check("RUNTIME_IMAGE" in froms[-1] and any("debian:bookworm-slim" in line for line in lines),
          "Dockerfile: runtime on debian:bookworm-slim")
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    check(users and users[-1].split(":")[0] not in ("root", "0"), "Dockerfile: runs as non-root")
    for binary in ("ingest", "projector", "query-api"):
        check(any(line.startswith("COPY --from=") and binary in line for line in lines),
              f"Dockerfile: final image lacks {binary}")
    for line in lines:
        if line.startswith("COPY ") and "--from=" not in line:
            for source in line.split()[1:-1]:
                check(os.path.exists(os.path.join(ROOT, source)), f"Dockerfile: COPY {source} missing")


def admin_command_key(words):
    """`query-api keys create --account A` -> `query-api keys create`, as the docs' table names it."""
    binary, rest = words[0], [w for w in words[1:] if re.fullmatch(r"[a-z][a-z-]*", w)]
    if binary == "projector" and rest[:1] != ["parked"]:
        return " ".join([binary] + rest[:1])
    return " ".join([binary] + rest[:2])


def admin_command_needs(section):
    """{command key: variables a container must have} from the table's "needs" column (a
    variable in parentheses is optional or passed with the command, e.g. MEMBER_PASSWORD)."""
    needs = {}
    for row in section.splitlines():
        if not row.startswith("| `"):
            continue
        first, need = row.split(" | ")[0], row.split(" | ")[1]
        required = set(re.findall(r"`([A-Z_]+)`", re.sub(r"\([^)]*\)", "", need)))
        binary = None
        for span in re.findall(r"`([^`]*)`", first):
            words = span.replace("\\|", "|").split()
            if words[0] in ("query-api", "projector"):
                binary = words.pop(0)
            if binary and any(re.fullmatch(r"[a-z][a-z-]*", w) for w in words):
                needs[admin_command_key([binary] + words)] = required
    return needs


def final_stage_binaries():
    lines = open(os.path.join(DEPLOY, "Dockerfile")).read().splitlines()
    last = max(i for i, line in enumerate(lines) if line.startswith("FROM "))
    shipped = set()
    for line in lines[last:]:
        parts = line.split()
        if parts[:1] == ["COPY"] and parts[-1].rstrip("/") in ("/usr/local/bin", "/usr/bin"):
            shipped |= {os.path.basename(p) for p in parts[1:-1] if not p.startswith("--")}
    return shipped


def k8s_env_names(deployment):
    """The variable names a Deployment's first container gets (env and envFrom, resolved)."""
    k8s = os.path.join(DEPLOY, "k8s")
    maps = {}
    for name in os.listdir(k8s):
        if name.endswith(".yaml") and name != "kustomization.yaml":
            for doc in load_all(os.path.join(k8s, name)):
                if doc.get("kind") in ("ConfigMap", "Secret"):
                    keys = set(doc.get("data") or {}) | set(doc.get("stringData") or {})
                    maps[(doc["kind"], doc["metadata"]["name"])] = keys
                if doc.get("kind") == "Deployment" and doc["metadata"]["name"] == deployment:
                    container = doc["spec"]["template"]["spec"]["containers"][0]
    names = {e["name"] for e in container.get("env", [])}
    for source in container.get("envFrom", []):
        for kind, ref in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
            if ref in source:
                names |= maps.get((kind, source[ref]["name"]), set())
    return names


def check_admin_commands():
    """Every `exec` command of docs/self-hosting.md's "Admin commands in containers": the image's
    final stage ships its binary, and the compose service or Kubernetes Deployment it runs in has
    every variable the table's "needs" column names for it. (No container engine runs here:
    these checks are static.)"""
    text = open(os.path.join(ROOT, "docs", "self-hosting.md")).read()
    section = text.split("## Admin commands in containers", 1)[1].split("\n## ", 1)[0]
    needs = admin_command_needs(section)
    check(needs, "self-hosting.md: no admin command table")
    shipped = final_stage_binaries()
    services = load_all(os.path.join(DEPLOY, "compose.yaml"))[0].get("services", {})
    block = section.split("```sh", 1)[1].split("```", 1)[0].replace("\\\n", " ")
    execs = 0
    for line in block.splitlines():
        words = shlex.split(line, comments=True)
        if "exec" not in words:
            continue
        execs += 1
        rest = words[words.index("exec") + 1:]
        given = set()
        if "--" in rest:  # kubectl -n NS exec deploy/NAME -- BINARY ...
            where, rest = rest[: rest.index("--")], rest[rest.index("--") + 1:]
            target = where[-1].split("/")[-1]
            available = k8s_env_names(target)
            place = f"Deployment {target}"
        else:  # $DC exec [-e VAR=value]... SERVICE BINARY ...
            while rest and rest[0].startswith("-"):
                if rest[0] == "-e":
                    given.add(rest[1].split("=", 1)[0])
                    rest = rest[1:]
                rest = rest[1:]
            target, rest = rest[0], rest[1:]
            check(target in services, f"self-hosting.md: exec into unknown compose service {target}")
            available = set(services.get(target, {}).get("environment") or {})
            place = f"compose service {target}"
        binary = rest[0]
        check(binary in shipped, f"self-hosting.md: `{binary}` is not in the image's final stage")
        key = admin_command_key(rest)
        check(key in needs, f"self-hosting.md: `{key}` is run with exec but not in the table")
        for var in sorted(needs.get(key, set()) - available - given):
            check(False, f"self-hosting.md: `{key}` in {place} lacks {var}")
    check(execs > 0, "self-hosting.md: no exec command in the admin commands section")


def docker_compose_config():
    docker = shutil.which("docker")
    if not docker or subprocess.run([docker, "compose", "version"], capture_output=True).returncode:
        print("note: the docker compose plugin is not installed; skipped `docker compose config -q`")
        return
    env = dict(os.environ, ADMIN_KEY=os.environ.get("ADMIN_KEY", "x"), IP_HASH_KEY="x",
               WEBHOOK_SECRETS_KEY="x" * 32, PRIVACY_MASTER_KEY="x" * 32)
    run = subprocess.run([docker, "compose", "-f", os.path.join(DEPLOY, "compose.yaml"), "config", "-q"],
                         capture_output=True, text=True, env=env)
    check(run.returncode == 0, f"docker compose config: {run.stderr.strip()}")
    if run.returncode == 0:
        print("docker compose config -q: ok")


def main():
    for step in (check_k8s, check_compose, check_nginx, check_dockerfile, check_admin_commands,
                 docker_compose_config):
        try:
            step()
        except (KeyError, TypeError, AttributeError, IndexError, OSError, yaml.YAMLError) as error:
            problems.append(f"{step.__name__}: malformed ({type(error).__name__}: {error})")
    for problem in problems:
        print(f"deploy: {problem}", file=sys.stderr)
    if problems:
        return 1
    print("deployment files: ok (k8s, compose, nats, nginx, Dockerfile, the docs' admin commands)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
