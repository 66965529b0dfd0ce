"""No secret in what an agent run keeps: the layer scan, its encodings, scrubbing, real CLIs.

The checks are made the way the issue's reporter made them: ``docker save`` of the image
(every byte it keeps) searched for the key. A leaky custom agent writes the key where
agents do (the repository, ``~/.bashrc``, ``/tmp``, a config file, encoded, in a file
name); the real Codex CLI as a plain command writes it into its shell snapshot; the
built-in Codex and Claude Code backends, configured by pytest-reb, write it nowhere.
"""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from support.agentruns import agent, host_files, saved_hits

from pytest_reb.loop.agent import backends, health, leaks
from pytest_reb.loop.agent.run import run_agent
from pytest_reb.loop.task import select

SECRET = "sk-reb-leak-0123456789abcdefGHIJ"
KEYS = {"REB_TEST_API_KEY": SECRET}


@pytest.mark.parametrize("before", ["", "a", "ab", "abc", "prefix-of-some-length "])
def test_every_encoding_of_a_secret_is_found_wherever_it_starts(before: str) -> None:
    forms = leaks.encodings(SECRET)
    data = (before + SECRET + "&more").encode()
    written = [base64.b64encode(data).decode(), base64.urlsafe_b64encode(data).decode(),
               quote(before + SECRET + "/x", safe=""), json.dumps({"k": before + SECRET}),
               data.hex(), before + SECRET]
    for text in written:
        assert any(f in text for f in forms), text
    assert all(len(f) >= leaks.MIN_FRAGMENT for f in forms)


def test_short_values_are_scrubbed_but_not_looked_for_and_names_are_not_secrets() -> None:
    secrets = {"PIN": "1234", "OPENAI_BASE_URL": "https://api.example", "KEY": SECRET}
    assert leaks.scan_patterns(secrets) == sorted(leaks.encodings(SECRET))
    assert leaks.scrub("pin 1234 at https://api.example", secrets) == \
        "pin <redacted> at https://api.example"
    encoded = base64.b64encode(SECRET.encode()).decode()
    assert SECRET not in leaks.scrub(f"{SECRET} {encoded}", secrets)
    assert "<redacted>" in leaks.scrub(encoded, secrets)


def test_what_comes_back_is_scrubbed_in_bytes_across_chunks_and_in_names(
        tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    head = b"\xff\xfe" + b"x" * ((1 << 20) - 10)  # the value straddles the first chunk's end
    big.write_bytes(head + SECRET.encode() + b"\x00\x81tail")
    named = tmp_path / f"trace-{SECRET}.json"
    named.write_text("{}")
    nested = tmp_path / f"dir-{SECRET}"
    nested.mkdir()
    (nested / "inner.txt").write_text(f"key={quote(SECRET)}")
    leaks.scrub_folder(tmp_path, KEYS)
    data = big.read_bytes()
    assert SECRET.encode() not in data and data.startswith(b"\xff\xfe")  # binary kept
    assert data.endswith(b"<redacted>\x00\x81tail")
    for path in tmp_path.rglob("*"):
        assert SECRET not in path.name
        if path.is_file():
            assert SECRET not in path.read_text(errors="replace")
    assert (tmp_path / "dir-<redacted>" / "inner.txt").read_text() == "key=<redacted>"


LEAKY = ("sh -c 'echo \"key=$REB_TEST_API_KEY\" >> {repo}/notes.txt; "
         "echo \"export REB_TEST_API_KEY=$REB_TEST_API_KEY\" >> /root/.bashrc; "
         "echo $REB_TEST_API_KEY > /tmp/agent.log; "
         "mkdir -p /root/.config/pip; printf \"[global]\\nindex-url = https://u:%s@x/\\n\" "
         "\"$REB_TEST_ENCODED\" > /root/.config/pip/pip.conf; "
         "printf %s \"token: $REB_TEST_API_KEY\" | base64 > /root/.netrc.b64; "
         "touch /tmp/cache-$REB_TEST_API_KEY; echo done'")


def _leaky_secrets() -> dict[str, str]:
    # the URL-encoded form is handed in ready-made: the task image has no encoder
    return {**KEYS, "REB_TEST_ENCODED": quote(SECRET + "/=", safe="")}


@pytest.mark.container
def test_a_leak_into_the_layer_commits_nothing_and_names_every_path(
        docker_client: Any, tinynet_task: str, tmp_path: Path, agent_images: list[str]) -> None:
    rec = agent(docker_client, tinynet_task, tmp_path, agent_images, LEAKY,
                secrets=_leaky_secrets())
    assert (rec.status, rec.exit_code, rec.image) == ("secret_leaked", 0, None)
    assert set(rec.leaks) >= {"/data/project/repo/notes.txt", "/root/.bashrc", "/tmp/agent.log",
                              "/root/.config/pip/pip.conf", "/root/.netrc.b64",
                              "/tmp/cache-<redacted>"}
    assert rec.secret_scan.startswith("upper directory: ")
    assert not docker_client.images.list(filters={"label": f"reb.agent-env.run={rec.run}"})
    assert not (tmp_path / "runs" / "matrix.jsonl").exists()
    for path in host_files(tmp_path / "runs"):
        assert SECRET not in path.read_text(errors="replace") and SECRET not in str(path)
    [line] = (tmp_path / "runs" / "agent_runs.jsonl").read_text().splitlines()
    assert json.loads(line)["status"] == "secret_leaked"


@pytest.mark.container
def test_scrub_secrets_takes_the_paths_out_of_the_layer_and_commits(
        docker_client: Any, tinynet_task: str, tmp_path: Path, agent_images: list[str]) -> None:
    rec = agent(docker_client, tinynet_task, tmp_path, agent_images, LEAKY,
                secrets=_leaky_secrets(), scrub_secrets=True)
    assert rec.status == "finished" and rec.image and not rec.leaks
    assert "/root/.bashrc" in rec.scrubbed and "0 path(s) hold one" in rec.secret_scan
    forms = sorted(leaks.encodings(SECRET))
    assert saved_hits(rec.image, forms) == 0
    assert saved_hits(rec.image, ["scimlopsbench/prompt.md"]) > 0  # the search does find
    out = docker_client.containers.run(
        rec.image, ["sh", "-c", "grep -c REB_TEST /root/.bashrc; ls /tmp; echo END"],
        remove=True, network_mode="none").decode()
    assert out.split() == ["0", "END"]  # .bashrc is the task image's again, /tmp is empty


def _cli(name: str) -> Path:
    from pytest_reb.loop.agent.cli import tools_root

    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    try:
        return backends.install(backends.BUILTIN[name], tools_root() / name)
    except backends.BackendError as exc:
        pytest.skip(f"cannot install {name} here: {exc}")


@pytest.mark.container
@pytest.mark.parametrize(("name", "key"), [("codex", "OPENAI_API_KEY"),
                                           ("claude-code", "ANTHROPIC_API_KEY")])
def test_the_built_in_clis_write_their_key_nowhere_that_is_kept(
        name: str, key: str, docker_client: Any, tinynet_task: str, tmp_path: Path,
        agent_images: list[str]) -> None:
    """The real CLI with a key and no service, its output read as a plain run's (so the
    run is kept whatever it said): the committed image holds no form of the key."""
    folder = _cli(name)
    backend = backends.resolve(name, usage="none")
    rec = run_agent(docker_client, backend, select(["reb/tinynet"])[0], out_root=tmp_path,
                    budget=15, gpus="none", tool_dir=folder, task_image=tinynet_task,
                    secrets={key: SECRET}, preflight=health.SKIPPED)
    assert rec.image, rec.error
    agent_images.append(rec.image)
    assert not rec.leaks and "0 path(s) hold one" in rec.secret_scan
    assert saved_hits(rec.image, sorted(leaks.encodings(SECRET))) == 0
    # nor is the CLI in it: only the empty mount points are
    out = docker_client.containers.run(
        rec.image, ["sh", "-c", "command -v claude codex; ls -A /opt/reb-agent/tool "
                    "/opt/reb-agent/state; echo END"], remove=True, network_mode="none")
    assert out.decode().split() == ["/opt/reb-agent/state:", "/opt/reb-agent/tool:", "END"]


@pytest.mark.container
def test_the_real_codex_as_a_plain_command_leaks_its_shell_snapshot_and_is_caught(
        docker_client: Any, tinynet_task: str, tmp_path: Path, agent_images: list[str]) -> None:
    """Codex run as any CLI would be (its own ``~/.codex``, shell snapshots on) writes
    ``declare -x OPENAI_API_KEY=…`` into the layer: the scan finds it, nothing is kept."""
    from dataclasses import replace

    folder = _cli("codex")
    bin_dir = "/opt/reb-agent/tool/node_modules/.bin"
    plain = backends.resolve("codex-plain", command=f"{bin_dir}/codex exec --json "
                             "--skip-git-repo-check --dangerously-bypass-approvals-and-sandbox "
                             "{prompt}")
    plain = replace(plain, needs_node=True, env={"PATH": f"{bin_dir}:$PATH"})
    rec = run_agent(docker_client, plain, select(["reb/tinynet"])[0], out_root=tmp_path,
                    budget=15, gpus="none", tool_dir=folder, task_image=tinynet_task,
                    secrets={"OPENAI_API_KEY": SECRET}, preflight=health.SKIPPED)
    assert (rec.status, rec.image) == ("secret_leaked", None)
    assert any(p.startswith("/root/.codex/shell_snapshots/") for p in rec.leaks), rec.leaks
    assert not docker_client.images.list(filters={"label": f"reb.agent-env.run={rec.run}"})


@pytest.mark.container
def test_the_engines_export_is_read_where_the_layer_is_not_on_this_host(
        docker_client: Any, tinynet_task: str) -> None:
    """The fallback channel (a remote engine, another storage driver): the changed paths of
    the engine's export, names with a leading dot and top-level files included."""
    from pytest_reb.targets import labels

    ctr = docker_client.containers.run(
        tinynet_task, ["sh", "-c", f"echo {SECRET} > /.top-secret; echo {SECRET} > /root/.rc; "
                                   "echo clean > /root/plain"],
        detach=True, network_mode="none", labels=labels("tests-leaks-export"))
    try:
        ctr.wait(timeout=60)
        found = leaks._scan_export(ctr, leaks.scan_patterns(KEYS))
    finally:
        ctr.remove(force=True, v=True)
    assert (found.channel, sorted(found.contents)) == ("export", ["/.top-secret", "/root/.rc"])


#: The key where no file's bytes hold it: a link's target, a hard link's name, an extended
#: attribute (name and value), a directory's name deleted later (nothing left of it).
LINKED = ("sh -c 'ln -s /nonexistent/$REB_TEST_API_KEY /tmp/link; "
          "echo clean > /tmp/plain; ln /tmp/plain /tmp/hard-$REB_TEST_API_KEY; "
          "echo x > /tmp/attr; python3 -c \"import os; "
          "os.setxattr(\\\"/tmp/attr\\\", \\\"user.k\\\", os.environ[\\\"REB_TEST_API_KEY\\\"]"
          ".encode())\"; mkdir /tmp/gone-$REB_TEST_API_KEY; rmdir /tmp/gone-$REB_TEST_API_KEY; "
          "echo done'")


@pytest.mark.container
def test_a_key_in_a_link_target_a_hard_link_name_or_an_xattr_is_found_and_scrubbed(
        docker_client: Any, tinynet_task: str, tmp_path: Path, agent_images: list[str]) -> None:
    """The scan reads what a layer carries beyond file bytes; --scrub-secrets takes it out,
    and ``docker save`` of the kept image holds no form of the key."""
    rec = agent(docker_client, tinynet_task, tmp_path / "kept", agent_images, LINKED,
                secrets=KEYS)
    assert (rec.status, rec.image) == ("secret_leaked", None), rec.error
    assert {"/tmp/link", "/tmp/hard-<redacted>"} <= set(rec.leaks), rec.leaks
    xattrs_here = "/tmp/attr" in rec.leaks  # a filesystem without user xattrs stores none
    rec = agent(docker_client, tinynet_task, tmp_path / "scrubbed", agent_images, LINKED,
                secrets=KEYS, scrub_secrets=True)
    assert rec.status == "finished" and rec.image, rec.error
    assert {"/tmp/link", "/tmp/hard-<redacted>"} <= set(rec.scrubbed)
    assert xattrs_here == ("/tmp/attr" in rec.scrubbed)
    assert saved_hits(rec.image, sorted(leaks.encodings(SECRET))) == 0
    out = docker_client.containers.run(rec.image, ["sh", "-c", "ls -A /tmp; echo END"],
                                       remove=True, network_mode="none").decode()
    assert out.split() == ["plain", "END"]


@pytest.mark.container
def test_a_key_in_the_task_images_config_or_history_keeps_no_image(
        docker_client: Any, tinynet_task: str, tmp_path: Path, agent_images: list[str]) -> None:
    """A custom task image that carries the key in a label, its Env or its history: the
    commit would keep it, so the committed image is removed and the run says why."""
    from pytest_reb.targets import labels

    base = docker_client.containers.create(tinynet_task, ["true"],
                                           labels=labels("tests-leaks-config"))
    tagged = "reb-test-leaky-task:config"
    try:
        docker_client.api.commit(base.id, repository="reb-test-leaky-task", tag="config",
                                 message=f"made with {SECRET}",
                                 changes=[f"ENV BAKED={SECRET}", f"LABEL baked={SECRET}"])
    finally:
        base.remove(force=True)
    agent_images.append(tagged)
    rec = agent(docker_client, tagged, tmp_path, agent_images, "true", secrets=KEYS)
    assert (rec.status, rec.image) == ("secret_leaked", None)
    assert "config or history" in (rec.error or "")
    assert not docker_client.images.list(filters={"label": f"reb.agent-env.run={rec.run}"})
