"""NexAU, the paper's fourth agent setup: installed from its source, run as the official
runner runs it, its tokens read from what it writes.

The official runner (``tools/env_setup_runner``, backend ``nexau``) runs
``/opt/nexau/.venv/bin/python /opt/nexau/env_setup_config/run_once.py`` in the job's
container with ``NEXAU_AGENT_CONFIG`` (the generic config reads ``LLM_MODEL``,
``LLM_BASE_URL``, ``LLM_API_KEY``, ``LLM_API_TYPE``, ``LLM_TOOL_CALL_MODE``; its system
prompt is the NexAU tree's own ``env_setup_config/system_prompt.md``) and no task
argument, so ``run_once.py`` reads the tree's own ``env_setup_config/task_prompt.txt``;
the agent writes the report itself. Here the same ``run_once.py`` runs
from a host folder mounted read-only at ``{tool}``, never part of the task image:

``{tool}/nexau``    the NexAU tree, from a checkout or a git directory (a mirror)
``{tool}/site``     NexAU and its dependencies from PyPI (``pip install --target``)
``{tool}/python``   a CPython of at least 3.12 (NexAU's own minimum; a task image has
                    Debian's 3.11), copied from one the user names, its library path
                    rewritten to ``$ORIGIN/../lib`` so it runs wherever it is mounted
``{tool}/reb-nexau.yaml``  the official generic config, its paths under ``{tool}/nexau``,
                    with a tracer of ours in place of Langfuse (below)
``{tool}/reb_nexau.py``    the launcher and that tracer

The launcher runs with ``-I``: the interpreter reads no ``PYTHONPATH`` and sets none, so
the shell commands the agent runs see none of NexAU's packages. NexAU reports tokens only
to a tracer (the official runs exported them from Langfuse); our tracer is one of NexAU's
own ``BaseTracer`` plug-ins that appends each model call's ``usage`` to
``{out}/nexau_usage.jsonl``, which ``usage`` sums.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from pytest_reb.loop.agent.contract import TOOL_MOUNT, BackendError, Tokens, count

#: What our tracer writes under ``{out}``.
USAGE_FILE = "nexau_usage.jsonl"
#: Where the tree is mounted (the official runner's ``/opt/nexau``).
HOME = f"{TOOL_MOUNT}/nexau"

LAUNCHER = '''"""pytest-reb's launcher of NexAU's run_once.py; the tracer that writes its usage."""
import json
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "site"), os.path.join(HERE, "nexau")]

from nexau.archs.tracer.adapters.in_memory import InMemoryTracer  # noqa: E402
from nexau.archs.tracer.core import SpanType  # noqa: E402


class UsageTracer(InMemoryTracer):
    """NexAU's in-memory tracer that also appends every model call's usage to a file."""

    def end_span(self, span, outputs=None, error=None, attributes=None):
        super().end_span(span, outputs=outputs, error=error, attributes=attributes)
        usage = outputs.get("usage") if isinstance(outputs, dict) else None
        path = os.environ.get("REB_NEXAU_USAGE")
        if span.type == SpanType.LLM and isinstance(usage, dict) and path:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(usage, default=str) + "\\n")


if __name__ == "__main__":
    sys.argv = [os.path.join(HERE, "nexau", "env_setup_config", "run_once.py"), *sys.argv[1:]]
    runpy.run_path(sys.argv[0], run_name="__main__")
'''


def install(folder: Path, *, source: Path | None, python: str | None) -> str:
    """Fill ``folder`` (NexAU's tree, its packages, an interpreter, config, launcher); the
    marker text of what was installed."""
    if source is None or python is None:
        raise BackendError("nexau installs from a source: give --source (a NexAU checkout, or "
                           "its git directory) and --python (a CPython 3.12 or newer)")
    interpreter = shutil.which(python) or python
    version = _version(interpreter)
    for sub in ("nexau", "site", "python"):
        shutil.rmtree(folder / sub, ignore_errors=True)
    commit = _tree(source, folder / "nexau")
    _interpreter(interpreter, version, folder / "python")
    # compiled here: the folder is mounted read-only, and compiling some thousand modules
    # (openai, anthropic, pydantic, pandas, ...) at every start costs minutes of the budget
    done = subprocess.run([interpreter, "-m", "pip", "install", "--quiet",
                           "--disable-pip-version-check", "--target", str(folder / "site"),
                           str(folder / "nexau")], capture_output=True, text=True, check=False)
    if done.returncode:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:]
        raise BackendError(f"installing NexAU's dependencies failed: {' '.join(last)}")
    (folder / "reb-nexau.yaml").write_text(config(folder / "nexau"))
    (folder / "reb_nexau.py").write_text(LAUNCHER)
    return f"nexau {commit} python {version}"


def _version(interpreter: str) -> str:
    try:
        done = subprocess.run([interpreter, "-c", "import sys; print('%d.%d' % sys.version_info"
                               "[:2])"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise BackendError(f"--python {interpreter}: does not run ({exc})") from None
    version = done.stdout.strip()
    if tuple(map(int, version.split("."))) < (3, 12):
        raise BackendError(f"--python {interpreter} is Python {version}; NexAU needs 3.12+")
    return version


def _tree(source: Path, into: Path) -> str:
    """NexAU's files from a checkout (copied) or a git directory (its HEAD, archived); the
    commit when known."""
    git_dir = source if (source / "HEAD").is_file() and (source / "objects").is_dir() else None
    if git_dir is None and not (source / "env_setup_config" / "run_once.py").is_file():
        raise BackendError(f"--source {source}: neither a NexAU checkout (no "
                           "env_setup_config/run_once.py) nor its git directory")
    if git_dir is None:
        shutil.copytree(source, into, ignore=shutil.ignore_patterns(".git", ".venv",
                                                                   "node_modules"))
        head = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"],
                              capture_output=True, text=True, check=False)
        return head.stdout.strip() or "checkout"
    into.mkdir(parents=True)
    with tempfile.TemporaryFile() as fh:
        subprocess.run(["git", f"--git-dir={git_dir}", "archive", "HEAD"], stdout=fh,
                       check=True)
        fh.seek(0)
        with tarfile.open(fileobj=fh) as tar:
            tar.extractall(into, filter="data")
    head = subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"],
                          capture_output=True, text=True, check=True)
    return head.stdout.strip()


def _interpreter(interpreter: str, version: str, into: Path) -> None:
    """The interpreter's binary, its shared library and standard library (no tests, no site
    packages), the binary's library path made relative to where it is mounted."""
    from pytest_reb.loop.cluster.harness import patchelf

    done = subprocess.run([interpreter, "-c", "import sys, sysconfig; print(sys.executable); "
                           "print(sysconfig.get_config_var('LIBDIR') or ''); "
                           "print(sysconfig.get_path('stdlib'))"],
                          capture_output=True, text=True, check=True)
    executable, libdir, stdlib = done.stdout.splitlines()
    (into / "bin").mkdir(parents=True)
    binary = into / "bin" / "python3"
    shutil.copy2(Path(executable).resolve(), binary)
    for lib in Path(libdir).glob(f"libpython{version}*.so*") if libdir else []:
        (into / "lib").mkdir(exist_ok=True)
        shutil.copy2(lib, into / "lib" / lib.name)
    # with its compiled modules (their timestamps kept, so they stay valid)
    shutil.copytree(stdlib, into / "lib" / f"python{version}", symlinks=True,
                    ignore=shutil.ignore_patterns("test", "site-packages", "idlelib",
                                                  "tkinter", "turtledemo"))
    tool = into / ".patchelf"
    tool.write_bytes(patchelf())
    tool.chmod(0o755)
    try:
        subprocess.run([str(tool), "--set-rpath", "$ORIGIN/../lib", str(binary)], check=True,
                       capture_output=True)
    finally:
        tool.unlink()


def config(tree: Path) -> str:
    """The official generic config (``nexau_generic_llm.yaml`` of the release, as NexAU's tree
    gives its parts) with its paths in the mounted tree, our usage tracer for Langfuse, and
    no summary model (``SUMMARY_*``, which the official runner's ``.env`` set)."""
    text = (tree / "env_setup_config" / "deepseek-v3.1-nex-n1.yaml").read_text()
    text = re.sub(r"(?m)^tool_call_mode:.*$", "tool_call_mode: ${env.LLM_TOOL_CALL_MODE}", text)
    text = re.sub(r"(?m)^(\s+api_type:).*$", r"\1 ${env.LLM_API_TYPE}", text)
    text = re.sub(r"(?m)^system_prompt: \./", f"system_prompt: {HOME}/env_setup_config/",
                  text)
    text = text.replace("yaml_path: ./tools/", f"yaml_path: {HOME}/env_setup_config/tools/")
    text = re.sub(r"(?ms)^tracers:.*\Z", "tracers:\n  - import: reb_nexau:UsageTracer\n", text)
    # the summary model serves only the sliding-window compaction, which this config does not
    # use; NexAU refuses a config naming a variable that is not set
    return re.sub(r"(?m)^\s+summary_\w+: \$\{env\.SUMMARY_\w+\}\n", "", text)


def usage(out_dir: Path) -> Tokens | None:
    """The sum of the model calls' usage our tracer wrote (OpenAI's or Anthropic's names)."""
    try:
        lines = (out_dir / USAGE_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    prompt = completion = calls = 0
    for line in lines:
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            calls += 1
            prompt += count(data.get("prompt_tokens", data.get("input_tokens")))
            completion += count(data.get("completion_tokens", data.get("output_tokens")))
    return Tokens(prompt, completion, {"model_calls": calls}) if calls else None
