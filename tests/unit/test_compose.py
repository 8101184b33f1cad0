"""docker-compose.yml: one image, one `hindsight <role>` per app service, and what the design relies on.

The structural tests read the file with PyYAML and need nothing else. `test_compose_config_validates` runs the
real `docker-compose config` (the Compose v2 binary `make install` puts in the venv; no daemon needed), and
fails rather than skips when it is missing, so that a machine without it is noticed.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
COMPOSE_FILE = REPO / "docker-compose.yml"
DOCKERFILE = REPO / "infra" / "Dockerfile"
# The standalone Docker Compose v2 binary that `make install` puts beside the interpreter (no daemon needed).
COMPOSE_BIN = Path(sys.executable).parent / "docker-compose"

# The `hindsight <role>` commands the compose file runs, one service each, all from infra/Dockerfile.
COMPOSE_ROLES = frozenset({"migrate", "scheduler", "worker", "indexer", "beat", "api", "mcp", "flower"})
INFRA_SERVICES = frozenset({"postgres", "redis", "qdrant"})

APP_ENV = {
    "HINDSIGHT_DATABASE_URL": "postgresql+psycopg://postgres:postgres@postgres:5432/hindsight",
    "HINDSIGHT_REDIS_URL": "redis://redis:6379/0",
    "HINDSIGHT_QDRANT_URL": "http://qdrant:6333",
}

COMPOSE_TIMEOUT_S = 60


def _load() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE_FILE.read_text(encoding="utf-8"))


SERVICES: dict[str, dict[str, Any]] = _load()["services"]
APP_SERVICES = sorted(name for name in SERVICES if name not in INFRA_SERVICES)


def _words(command: str | list[str] | None) -> list[str]:
    if command is None:
        return []
    return shlex.split(command) if isinstance(command, str) else [str(word) for word in command]


def _role(service: dict[str, Any]) -> str:
    words = _words(service.get("command"))
    return words[0] if words else ""


def _environment(service: dict[str, Any]) -> dict[str, Any]:
    env = service.get("environment") or {}
    if isinstance(env, list):  # the `- KEY=value` form
        return dict(item.split("=", 1) if "=" in item else (item, None) for item in env)
    return dict(env)


def _compose(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(COMPOSE_BIN), "-f", str(COMPOSE_FILE), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMPOSE_TIMEOUT_S,
        check=False,
    )


def test_infra_services_are_present() -> None:
    assert set(SERVICES) >= INFRA_SERVICES


def test_roles_in_compose_are_exactly_the_hindsight_roles() -> None:
    roles = [_role(SERVICES[name]) for name in APP_SERVICES]
    assert len(roles) == len(set(roles)), f"a role runs in two services: {sorted(roles)}"
    assert set(roles) == COMPOSE_ROLES


@pytest.mark.parametrize("name", APP_SERVICES)
def test_app_service_runs_one_hindsight_role(name: str) -> None:
    service = SERVICES[name]
    assert _role(service) in COMPOSE_ROLES, f"{name}: command {service.get('command')!r}"
    # The role is an argument to the image's `hindsight` entrypoint; overriding it would run something else.
    assert "entrypoint" not in service


def test_every_compose_role_is_a_hindsight_command() -> None:
    import typer.main

    from pipeline.cli.main import app

    commands = set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    assert commands >= COMPOSE_ROLES, f"not `hindsight` commands: {sorted(COMPOSE_ROLES - commands)}"


@pytest.mark.parametrize("role", sorted(COMPOSE_ROLES))
def test_compose_role_command_parses(role: str) -> None:
    from typer.testing import CliRunner

    from pipeline.cli.main import app

    result = CliRunner().invoke(app, [role, "--help"])
    assert result.exit_code == 0, result.output


def test_image_entrypoint_is_hindsight() -> None:
    instructions = [line.strip() for line in DOCKERFILE.read_text(encoding="utf-8").splitlines()]
    assert 'ENTRYPOINT ["hindsight"]' in instructions
    assert 'CMD ["api"]' in instructions


def test_app_services_share_one_image_and_build() -> None:
    first = SERVICES[APP_SERVICES[0]]
    assert first.get("image")
    assert first["build"]["dockerfile"] == "infra/Dockerfile"
    for name in APP_SERVICES:
        assert SERVICES[name].get("image") == first["image"], name
        assert SERVICES[name].get("build") == first["build"], name


@pytest.mark.parametrize("name", APP_SERVICES)
def test_app_service_reaches_the_shared_servers(name: str) -> None:
    env = _environment(SERVICES[name])
    assert {key: env.get(key) for key in APP_ENV} == APP_ENV


def test_redis_keeps_an_append_only_file() -> None:
    words = _words(SERVICES["redis"].get("command"))
    assert "--appendonly" in words
    assert words[words.index("--appendonly") + 1] == "yes"
    assert SERVICES["redis"].get("volumes"), (
        "an append-only file on the container's own layer is lost with it"
    )


def test_servers_keep_their_data_in_volumes() -> None:
    for name in INFRA_SERVICES:
        assert SERVICES[name].get("volumes"), name


def test_worker_can_be_scaled() -> None:
    worker = SERVICES["worker"]
    assert _role(worker) == "worker"
    assert "container_name" not in worker
    assert not worker.get("ports")


def test_flower_has_basic_auth() -> None:
    env = _environment(SERVICES["flower"])
    assert env.get("HINDSIGHT_FLOWER_USER")
    password = env.get("HINDSIGHT_FLOWER_PASSWORD")
    assert isinstance(password, str)
    assert password.startswith("${HINDSIGHT_FLOWER_PASSWORD"), "the password comes from the environment"


def test_api_and_flower_listen_on_every_interface_of_their_container() -> None:
    for name, port in (("api", "8700"), ("flower", "5555")):
        service = SERVICES[name]
        assert _environment(service).get("HINDSIGHT_API_HOST") == "0.0.0.0", name
        assert any(str(spec).endswith(f":{port}") for spec in service.get("ports", [])), name


def test_infra_services_have_healthchecks() -> None:
    assert "pg_isready" in " ".join(_words(SERVICES["postgres"]["healthcheck"]["test"]))
    for name in INFRA_SERVICES:
        assert SERVICES[name].get("healthcheck"), name


def test_migrate_runs_once_after_the_servers_are_healthy() -> None:
    migrate = SERVICES["migrate"]
    assert _role(migrate) == "migrate"
    assert migrate.get("restart") == "no"
    depends = migrate.get("depends_on") or {}
    for name in ("postgres", "redis"):
        assert depends[name]["condition"] == "service_healthy"


@pytest.mark.parametrize("name", [name for name in APP_SERVICES if name != "migrate"])
def test_app_service_waits_for_migrate(name: str) -> None:
    depends = SERVICES[name].get("depends_on") or {}
    assert depends.get("migrate", {}).get("condition") == "service_completed_successfully"
    for server in ("postgres", "redis"):
        assert depends[server]["condition"] == "service_healthy"


def test_compose_config_validates() -> None:
    env = {**os.environ, "HINDSIGHT_FLOWER_PASSWORD": "compose-config-check"}
    result = _compose("config", "--quiet", env=env)
    assert result.returncode == 0, result.stderr


def test_compose_config_requires_a_flower_password() -> None:
    env = {key: value for key, value in os.environ.items() if key != "HINDSIGHT_FLOWER_PASSWORD"}
    result = _compose("config", "--quiet", env=env)
    assert result.returncode != 0
    assert "HINDSIGHT_FLOWER_PASSWORD" in result.stderr


def test_mcp_listens_on_every_interface_and_reaches_the_api_service() -> None:
    service = SERVICES["mcp"]
    words = _words(service.get("command"))
    assert words[words.index("--transport") + 1] == "http"
    assert words[words.index("--host") + 1] == "0.0.0.0"
    port = words[words.index("--port") + 1]
    assert any(str(spec).endswith(f":{port}") for spec in service.get("ports", []))
    assert _environment(service).get("HINDSIGHT_API_URL") == "http://api:8700"
