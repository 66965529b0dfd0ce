"""Known fakes on every outcome of a target, each saying whether it could have produced it."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.outcomes import outcome as make_outcome

from pytest_reb.evidence.findings import attach
from pytest_reb.outcome import Outcome

HOOK = {"kind": "startup_hook", "path": "/venv/site-packages/zz.pth", "detail": "...",
        "seen_from": "host"}
SMI = {"kind": "fake_nvidia_smi", "path": "/usr/local/bin/nvidia-smi", "detail": "...",
       "seen_from": "host"}


def outcome(tier: str, status: str = "passed", message: str = "") -> Outcome:
    return make_outcome(tier, status, repo="r", message=message, strict=None, compat=None)


def test_a_startup_hook_could_produce_a_run_tiers_pass_and_strict_says_so() -> None:
    o = outcome("c1")
    attach(o, [HOOK, SMI], strict=True)
    assert [(f["kind"], f["could_produce"]) for f in o.findings] == [
        ("startup_hook", True), ("fake_nvidia_smi", False)]
    assert o.message == ("known fakes in the target that could have produced this pass: "
                         "startup_hook (/venv/site-packages/zz.pth)")


def test_a_failure_keeps_its_message_first_and_compat_adds_nothing() -> None:
    o = outcome("c3", "failed", "exit 1 (deps): ...")
    attach(o, [HOOK], strict=True)
    assert o.message.startswith("exit 1 (deps): ...; known fakes") and "this failure" in o.message
    quiet = outcome("c3")
    attach(quiet, [HOOK], strict=False)
    assert quiet.message == "" and quiet.findings[0]["could_produce"] is True


def test_c5_keeps_them_beside_its_audit_findings_and_nothing_twice() -> None:
    o = outcome("c5")
    attach(o, [SMI, SMI], strict=True)
    assert o.findings == [] and len(o.evidence["known_fakes"]) == 1
    assert o.evidence["known_fakes"][0]["could_produce"] is True  # a report written from it


def test_a_verdict_reached_before_running_is_no_findings_doing() -> None:
    o = outcome("c4", "failed", "needs 2 GPU(s), the target has 1")
    o.category = "insufficient_hardware"
    attach(o, [HOOK], strict=True)
    assert o.findings[0]["could_produce"] is False
    assert o.message == "needs 2 GPU(s), the target has 1"


def judged(tier: str, status: str = "passed") -> Outcome:
    o = outcome(tier, status, "exit 0 within 9 s")
    o.strict, o.compat = status == "passed", True
    if status == "failed":
        o.category = "deps"
    return o


def test_an_unowned_startup_hook_fails_a_strict_pass_and_names_itself() -> None:
    o = judged("c3")
    attach(o, [HOOK], strict=True)
    assert (o.status, o.category, o.strict, o.compat) == ("failed", "startup_hook", False, True)
    assert "/venv/site-packages/zz.pth" in o.message and "exit 0 within 9 s" in o.message


def test_a_c1_pass_rests_on_the_witness_and_keeps_the_hook_as_a_note() -> None:
    o = judged("c1")
    attach(o, [HOOK], strict=True)
    assert (o.status, o.strict) == ("passed", True) and "could have produced" in o.message


def test_an_owned_hook_keeps_the_pass_and_compat_keeps_its_verdict() -> None:
    owned = judged("c4")
    attach(owned, [{**HOOK, "owner": "setuptools-69.0.0"}], strict=True)
    assert (owned.status, owned.strict) == ("passed", True)
    compat = judged("c3")
    attach(compat, [HOOK], strict=False)
    assert (compat.status, compat.strict, compat.category) == ("passed", False, None)


def test_a_failure_keeps_its_own_category_beside_an_unowned_hook() -> None:
    o = judged("c3", "failed")
    attach(o, [HOOK], strict=True)
    assert (o.status, o.category) == ("failed", "deps") and "this failure" in o.message


def test_the_owner_is_read_from_record_hashes_and_dpkg_lists(tmp_path: Path) -> None:
    import base64
    import hashlib

    from pytest_reb.evidence.fakescan import rules

    site = tmp_path / "site-packages"
    (site / "pkg-1.0.dist-info").mkdir(parents=True)
    body = b"import _pkg_hook\n"
    (site / "pkg.pth").write_bytes(body)
    digest = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
    (site / "pkg-1.0.dist-info" / "RECORD").write_text(f"pkg.pth,sha256={digest},{len(body)}\n")
    fs = rules().LocalFS()
    assert rules().owner(fs, str(site / "pkg.pth")) == "pkg-1.0"
    (site / "pkg.pth").write_bytes(body + b"import os; os.system('x')\n")  # edited after
    assert rules().owner(fs, str(site / "pkg.pth")) is None
    (site / "_virtualenv.pth").write_text("import _virtualenv\n")
    assert rules().owner(fs, str(site / "_virtualenv.pth")) == "virtualenv"



@pytest.mark.parametrize("name", ["a,b.pth", 'q"uote.pth', "plain.pth"])
def test_the_owning_record_is_found_among_others_whatever_the_name(tmp_path: Path,
                                                                  name: str) -> None:
    """RECORDs that cannot name the file are skipped unparsed; one that quotes the name (a
    comma, a quote doubled, as ``csv`` writes them) is still read."""
    import base64
    import csv
    import hashlib
    import io

    from pytest_reb.evidence.fakescan import rules

    site = tmp_path / "site-packages"
    body = b"import _hook\n"
    (site / name).parent.mkdir(parents=True)
    (site / name).write_bytes(body)
    digest = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
    for i in range(5):
        (site / f"other{i}-1.0.dist-info").mkdir()
        (site / f"other{i}-1.0.dist-info" / "RECORD").write_text(f"other{i}.py,,\n")
    (site / "owner-2.0.dist-info").mkdir()
    rows = io.StringIO()
    csv.writer(rows).writerows([["owner.py", "", ""], [name, f"sha256={digest}", len(body)]])
    (site / "owner-2.0.dist-info" / "RECORD").write_text(rows.getvalue())
    assert rules().owner(rules().LocalFS(), str(site / name)) == "owner-2.0"

def test_a_hook_the_operator_trusts_by_digest_is_owned(tmp_path: Path) -> None:
    import hashlib

    from pytest_reb.evidence.fakescan import _owner, rules

    hook = tmp_path / "platform.pth"
    hook.write_text("import os; exec('pass')\n")
    digest = hashlib.sha256(hook.read_bytes()).hexdigest()
    fs = rules().LocalFS()
    assert _owner(fs, str(hook), frozenset()) == (None, digest)
    assert _owner(fs, str(hook), frozenset({digest})) == ("the operator (--reb-trust-hook)",
                                                          digest)
    hook.write_text("import os; exec('print(1)')\n")  # another content: trusted no more
    assert _owner(fs, str(hook), frozenset({digest}))[0] is None


def test_trust_hook_takes_a_sha256_and_nothing_else(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    bad = pytester.runpytest("--reb-trust-hook", "abc")
    assert bad.ret == 4 and "is not a sha256" in bad.stderr.str()
    good = pytester.runpytest("--reb-trust-hook", "sha256:" + "a" * 64)
    assert good.ret == 0
