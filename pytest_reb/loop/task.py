"""Task images: the bare starting point of one benchmark job, before any agent worked in it.

The official harness cloned the repository inside the agent's live container at job start
(needing network there, and a fresh clone per job); here the starting point is an image of its
own, so it is made once, cached by content, and every agent starts from the same bytes:

* a base image with what an environment-setup agent expects on a research box (python3 with
  venv and pip, git, a C/C++ toolchain, curl, ca-certificates), made locally with debootstrap
  (``pytest_reb.loop.images``), or any local image given with ``--base`` (a CUDA devel image);
* the repository at its pinned commit at ``/data/project/repo``, with its ``.git``, so the
  verifier's integrity check and commit lookup work on the agent's result;
* ``/opt/scimlopsbench/``: the task text (``prompt.md``), the report contract
  (``report_schema.json``) and ``task.json``; the agent writes ``report.json`` beside them.

The tag is ``reb-task:<owner>__<name>-<digest>`` over base image id, commit and task text, with
the alias ``reb-task:<owner>__<name>``.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import docker
from docker.errors import BuildError, ImageNotFound

from pytest_reb.loop import images
from pytest_reb.selfreport import AgentReport
from pytest_reb.spec import (
    OFFICIAL_REPO_DIR,
    OFFICIAL_REPORT_PATH,
    PROMPT_PATH,
    SCHEMA_PATH,
    TASK_DIR,
    Repo,
    module_paths,
)

log = logging.getLogger(__name__)

TASK_REPOSITORY = "reb-task"
TASK_BASE_REPOSITORY = "reb-task-base"
#: python3-dev and build-essential: many research repositories compile extensions on install.
TASK_BASE_PACKAGES = (*images.BASE_PACKAGES, "python3-pip", "python3-dev", "git",
                      "build-essential", "curl", "procps")
DEMO_REPO = "reb/tinynet"

LABEL_REPO = "reb.task.repo"
LABEL_COMMIT = "reb.task.commit"
LABEL_BASE = "reb.task.base"


class TaskError(RuntimeError):
    """A task image cannot be made; one line a person can act on."""


@dataclass(frozen=True)
class Task:
    """One repository to make a starting image of: its module's name and pinned commit."""

    repo: str
    commit: str
    #: the module file it was read from: the demo's source sits beside its module
    module: Path | None = field(default=None, compare=False)

    @property
    def slug(self) -> str:
        return self.repo.replace("/", "__")


def module_files(paths: Sequence[Path] | None = None) -> list[Path]:
    """The ``test_*.py`` files of ``--modules`` (files, or folders of them; default
    ``spec.DEFAULT_MODULES``), in order; a path that is not there is an error."""
    files: list[Path] = []
    for path in (paths := module_paths(paths)):
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files += sorted(path.glob("test_*.py"))
        else:
            raise TaskError(f"no such module or folder: {path} (--modules names the suite's "
                            "folder; run from a pytest-reb checkout or set REB_SOURCE)")
    if not files:
        raise TaskError(f"no repository modules in {', '.join(map(str, paths))}")
    return files


def known_tasks(paths: Sequence[Path] | None = None) -> dict[str, Task]:
    """Every repository module's (name, commit), keyed by lower-cased name."""
    found: dict[str, Task] = {}
    for path in module_files(paths):
        spec = importlib.util.spec_from_file_location(f"_reb_task_modules.{path.stem}", path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        repo = getattr(module, "repo", None)
        if isinstance(repo, Repo):
            found[repo.name.lower()] = Task(repo.name, repo.commit, module=path)
    return found


def select(names: Sequence[str], *, every: bool = False,
           modules: Sequence[Path] | None = None) -> list[Task]:
    """The tasks named (case-insensitive), or all 44 of ``repos/``; an unknown name is an error.

    ``modules``: the module files or folders to read (``--modules``).
    """
    known = known_tasks(modules)
    if every:
        return [t for t in known.values() if t.repo != DEMO_REPO]
    unknown = [n for n in names if n.lower() not in known]
    if unknown:
        raise TaskError(f"no repository module for {', '.join(unknown)}")
    return [known[n.lower()] for n in names]


def task_text(task: Task) -> str:
    """What the agent is told, in our words: the official rules, and how it will be checked."""
    keys = "\n".join(f"- `{k}`: {_key_rule(k)}" for k in REPORT_RULES)
    return f"""\
# Set up a working Python environment for {task.repo}

You are in a container. The repository is checked out at `{OFFICIAL_REPO_DIR}` at commit
`{task.commit}` (also in `$REPO_ROOT`). Make an environment in which this repository's code
really runs: its imports resolve, its CPU entrypoint runs, and, where the machine has GPUs,
its GPU and multi-GPU entrypoints run on them. You have network access now; the checks later
will have none, so install everything that is needed now.

## Rules

1. Do not edit, delete or add tracked files of the repository (code, configs, requirement
   files). Files outside the repository, environments, caches and untracked build outputs
   are fine. Every tracked file is compared with the commit afterwards.
2. End with ONE Python interpreter. Every check will run only the interpreter you report as
   `python_path`; nothing you activate in a shell survives.
3. Leave nothing running in the background: every process is killed when you finish.
4. Write the report below. Claim nothing you did not check: a value you did not verify is
   `null`, with the reason in `notes`. Every claim is compared with what the checks observe.

## What will be checked, without network, in fresh containers of your result

- C0: static import resolution of the repository with your interpreter;
- C1: the repository's CPU entrypoint, with no GPU device present;
- C2: CUDA in your framework, with a real kernel on the GPU;
- C3 and C4: the single-GPU and distributed entrypoints, with the GPUs really used;
- C5: your report against all of the above.
The entrypoints are fixed by the checker; do not invent them.

## The report: `{OFFICIAL_REPORT_PATH}`

One JSON object with these nine keys (more keys are allowed); its JSON Schema is
`{SCHEMA_PATH}`:

{keys}

For example, from your interpreter:

```
import json, sys
try:
    import torch
    tv, cuda, n = torch.__version__, torch.cuda.is_available(), torch.cuda.device_count()
except ImportError:
    tv, cuda, n = None, None, None
json.dump({{"python_path": sys.executable, "python_version": sys.version.split()[0],
           "torch_version": tv, "cuda_available": cuda, "gpu_count": n,
           "ddp_expected_ok": None, "env_tool": "venv", "env_name": "repo",
           "notes": "what you ran and what you could not check"}},
          open("{OFFICIAL_REPORT_PATH}", "w"), indent=2)
```

You are done when the report exists, parses, and agrees with what you ran.
"""


#: key -> (JSON type, rule); the schema and the prompt are both made from it.
REPORT_RULES: dict[str, tuple[list[str], str]] = {
    "python_path": (["string"], "absolute path of the one interpreter every check will run"),
    "python_version": (["string", "null"], "`sys.version.split()[0]` of that interpreter"),
    "torch_version": (["string", "null"], "`torch.__version__` there; null if torch is absent"),
    "cuda_available": (["boolean", "null"], "`torch.cuda.is_available()`, if you checked it"),
    "gpu_count": (["integer", "null"], "`torch.cuda.device_count()`, if you checked it"),
    "ddp_expected_ok": (["boolean", "null"],
                        "whether you checked that multi-GPU/DDP works; null if not checked"),
    "env_tool": (["string"], "one of " + ", ".join(
        AgentReport.model_fields["env_tool"].annotation.__args__)),  # type: ignore[union-attr]
    "env_name": (["string", "null"], "the environment's name"),
    "notes": (["string", "null"], "the commands you ran, decisions, and what stays unverified"),
}


def _key_rule(key: str) -> str:
    types, rule = REPORT_RULES[key]
    return f"{' or '.join(types)}; {rule}"


def report_schema() -> dict[str, object]:
    """The report contract as a JSON Schema (draft-07), made from the same rules as the text."""
    env_tools = list(AgentReport.model_fields["env_tool"].annotation.__args__)  # type: ignore[union-attr]
    props: dict[str, dict[str, object]] = {}
    for key, (types, rule) in REPORT_RULES.items():
        prop: dict[str, object] = {"type": types if len(types) > 1 else types[0],
                                   "description": rule}
        if key == "python_path":
            prop["minLength"] = 1
        if key == "gpu_count":
            prop["minimum"] = 0
        if key == "env_tool":
            prop["enum"] = env_tools
        props[key] = prop
    return {"$schema": "http://json-schema.org/draft-07/schema#", "title": "RebAgentReport",
            "type": "object", "required": list(REPORT_RULES), "properties": props,
            "additionalProperties": True}


def ensure_task_base(client: docker.DockerClient) -> str:
    """The default base: Debian with python3, venv, pip, git, gcc/g++, curl (debootstrap)."""
    return images.ensure_base_image(client, repository=TASK_BASE_REPOSITORY,
                                    packages=TASK_BASE_PACKAGES)


def ensure_task_image(client: docker.DockerClient, task: Task, *, base: str | None = None,
                      checkout: Path | None = None, mirror: Path | None = None) -> str:
    """Return the tag of ``task``'s starting image, building it if its content is new."""
    base = base or ensure_task_base(client)
    try:
        base_id = client.images.get(base).id
    except ImageNotFound:
        raise TaskError(f"base image {base!r} is not on this Docker engine") from None
    text = task_text(task)
    schema = json.dumps(report_schema(), indent=2) + "\n"
    recipe = images.digest("task", task.repo, task.commit, base_id, text, schema, DOCKERFILE)
    tag = f"{TASK_REPOSITORY}:{task.slug}-{recipe}"
    with images.lock(f"task-{task.slug}"):
        if not images.image_exists(client, tag):
            with tempfile.TemporaryDirectory(prefix="reb-task-", dir=_scratch_root()) as scr:
                context = Path(scr)
                _checkout(task, context / "repo", checkout=checkout, mirror=mirror)
                meta = context / "scimlopsbench"
                meta.mkdir()
                (meta / "prompt.md").write_text(text)
                (meta / "report_schema.json").write_text(schema)
                (meta / "task.json").write_text(json.dumps(
                    {"repo": task.repo, "commit": task.commit, "repo_dir": OFFICIAL_REPO_DIR,
                     "report_path": OFFICIAL_REPORT_PATH, "prompt": PROMPT_PATH,
                     "schema": SCHEMA_PATH}, indent=2) + "\n")
                (context / "Dockerfile").write_text(DOCKERFILE.format(base=base))
                labels = {images.LABEL_RECIPE: recipe, LABEL_REPO: task.repo,
                          LABEL_COMMIT: task.commit, LABEL_BASE: base_id}
                log.info("building %s", tag)
                try:
                    client.images.build(path=str(context), tag=tag, labels=labels, rm=True,
                                        forcerm=True, pull=False, network_mode="none")
                except BuildError as exc:
                    raise TaskError(f"building {tag} failed: {exc.msg}") from None
        client.images.get(tag).tag(TASK_REPOSITORY, task.slug)
        images.remove_superseded(client, tag)
    return tag


DOCKERFILE = f"""\
FROM {{base}}
COPY repo/ {OFFICIAL_REPO_DIR}/
COPY scimlopsbench/ {TASK_DIR}/
ENV SCIMLOPSBENCH_REPORT={OFFICIAL_REPORT_PATH} REPO_ROOT={OFFICIAL_REPO_DIR}
WORKDIR {OFFICIAL_REPO_DIR}
"""


def _scratch_root() -> Path:
    images.CACHE_DIR.mkdir(parents=True, exist_ok=True)
    return images.CACHE_DIR


def mirror_of(task: Task, mirror: Path) -> Path:
    """``--mirror`` is one bare repository, or a folder of them named ``owner+name[.git]``
    (each a repository, or holding one as ``repo/``)."""
    if (mirror / "HEAD").is_file() or (mirror / ".git").exists():
        return mirror
    owner, name = task.repo.split("/")
    for candidate in (f"{owner}+{name}", f"{owner}+{name}.git", f"{owner}__{name}", name):
        for found in (mirror / candidate / "repo", mirror / candidate):  # fetched: <dir>/repo
            if (found / "HEAD").is_file() or (found / ".git").exists():
                return found
    raise TaskError(f"no mirror of {task.repo} in {mirror} (looked for {owner}+{name})")


def _checkout(task: Task, dest: Path, *, checkout: Path | None, mirror: Path | None) -> None:
    """Clone ``task``'s source to ``dest`` and detach at its commit; its ``.git`` is kept."""
    if task.repo == DEMO_REPO and checkout is None and mirror is None:
        from pytest_reb.loop.demo.checkout import make_demo_checkout

        source = task.module.parent / "tinynet" if task.module else None
        commit = make_demo_checkout(dest, source)
        if commit != task.commit:
            raise TaskError(f"demo/tinynet is at {commit}, its module pins {task.commit}")
        return
    source = str(checkout or (mirror_of(task, mirror) if mirror else None)
                 or f"https://github.com/{task.repo}.git")
    git = ["git", "-c", "advice.detachedHead=false", "-c", "safe.directory=*"]
    _git([*git, "clone", "--quiet", "--no-checkout", source, str(dest)], f"cloning {source}")
    if _git([*git, "-C", str(dest), "cat-file", "-e", f"{task.commit}^{{commit}}"],
            None, check=False):
        raise TaskError(f"commit {task.commit} of {task.repo} is not in {source}")
    _git([*git, "-C", str(dest), "checkout", "--quiet", "--detach", task.commit],
         f"checking out {task.commit}")
    # a partial mirror can lack blobs; git then checks out without them and says so only on
    # stderr. The verifier would count each as deleted by the agent: refuse instead.
    listed = subprocess.run([*git, "-C", str(dest), "ls-files", "--deleted"], capture_output=True,
                            text=True, check=False).stdout.split()
    if listed:
        raise TaskError(f"{source} lacks {len(listed)} file(s) of {task.repo}@{task.commit[:12]} "
                        f"(e.g. {listed[0]}): its objects are missing; use a complete clone")
    _git([*git, "-C", str(dest), "remote", "set-url", "origin",
          f"https://github.com/{task.repo}.git"], "setting origin")


def _git(argv: list[str], what: str | None, *, check: bool = True) -> int:
    """Run git quietly (no prompts); on failure raise with its last line unless told not to."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    if done.returncode and check:
        last = (done.stderr.strip().splitlines() or [""])[-1]
        raise TaskError(f"{what} failed: {last}")
    return done.returncode


def build(names: Sequence[str], *, every: bool = False, base: str | None = None,
          checkout: Path | None = None, mirror: Path | None = None,
          modules: Sequence[Path] | None = None) -> list[tuple[Task, str | TaskError]]:
    """Build the named tasks' images, each on its own: (task, tag) or (task, why not).

    ``--checkout`` is one repository's clone, so it needs exactly one name.
    """
    tasks = select(names, every=every, modules=modules)
    if checkout is not None and len(tasks) != 1:
        raise TaskError("--checkout is one repository's clone; give exactly one owner/name")
    if shutil.which("git") is None:
        raise TaskError("git is not installed on this machine")
    client = docker.from_env()
    base = base or ensure_task_base(client)
    done: list[tuple[Task, str | TaskError]] = []
    for t in tasks:
        try:
            done.append((t, ensure_task_image(client, t, base=base, checkout=checkout,
                                              mirror=mirror)))
        except TaskError as exc:
            done.append((t, exc))
    return done
