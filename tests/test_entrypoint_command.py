"""A stage's command line (``pyramid/entrypoint._command``): values the report or the options
put in it stay argv elements, and inside a shell script they are quoted.
"""

from __future__ import annotations

from pytest_reb.spec import Run


def test_values_in_a_shell_script_are_quoted() -> None:
    import shlex

    from pytest_reb.pyramid.context import Context
    from pytest_reb.pyramid.entrypoint import _command, places
    from pytest_reb.runs.options import RebOptions
    from pytest_reb.selfreport import ReportLoad
    from pytest_reb.spec import Repo

    evil = "/x; touch /tmp/pwned; y/bin/python"
    ctx = Context(repo=Repo("a/b", commit="0" * 40), target_name="t", connect=lambda: None,  # type: ignore[arg-type,return-value]
                  read_report=lambda _: ReportLoad("r"), options=RebOptions(python=evil))
    run = Run(["{python}", "-m", "torch.distributed.run", "--no_python", "bash", "-lc",
               "timeout 8s {python} -m x --out {out}/r"])
    argv = _command(run, ctx, places(ctx, "/tmp/o"))
    assert argv[0] == evil  # an argv element: no shell reads it
    assert shlex.split(argv[-1]) == ["timeout", "8s", evil, "-m", "x", "--out", "/tmp/o/r"]
