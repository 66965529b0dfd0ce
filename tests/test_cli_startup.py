"""``reb --help`` answers without the engine's client or the report's models.

Building the command's parser used to import docker, requests and pydantic (through the agent
commands' defaults), about a quarter of a second before anything was asked; those are imported
by the commands that use them.
"""

from __future__ import annotations

import json
import subprocess
import sys


def test_help_imports_no_heavy_module() -> None:
    code = ("import runpy, sys, json\n"
            "sys.argv = ['reb', '--help']\n"
            "try:\n"
            "    runpy.run_module('pytest_reb.loop.cli', run_name='__main__')\n"
            "except SystemExit:\n"
            "    pass\n"
            "sys.stderr.write(json.dumps(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert "usage: reb" in done.stdout
    loaded = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert not loaded & {"docker", "requests", "pydantic"}, sorted(loaded & {"docker", "requests",
                                                                              "pydantic"})
