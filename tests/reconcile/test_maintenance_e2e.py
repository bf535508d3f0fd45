"""Maintenance windows and signed pins through `clmgit reconcile`: a real config repo, moto over
HTTP, the Kubernetes emulator; the hour set by `CLMGIT_NOW`, never slept until."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from clmgit.reconcile.maintenance import IGNORED

pytestmark = pytest.mark.slow  # end to end: moto and the emulator

MONDAY = "2026-11-30T10:00:00+01:00"
SATURDAY_NIGHT = "2026-12-05T02:30:00+01:00"


def with_window(records: list[dict]) -> None:
    for r in records:
        r["config_items"]["maintenance_window"] = "Sat-Sun 02:00-05:00 Europe/Berlin"


def test_outside_its_window_a_cluster_waits_untouched_then_updates_inside_it(
        sandbox_factory, monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox = sandbox_factory(1, edit=with_window)
    monkeypatch.setenv("CLMGIT_NOW", MONDAY)
    r = sandbox.reconcile()  # a new cluster is created at any time
    assert r.code == 0, r.err
    [created] = sandbox.clusters().values()
    sandbox.commit_version(2)

    r = sandbox.reconcile("-o", "json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    [item] = doc["items"]
    assert item["outcome"] == "waiting" and doc["summary"] == {"waiting": 1}
    assert "closed until 2026-12-05T02:00+01:00" in item["detail"]
    [now] = sandbox.clusters().values()
    assert now.status == created.status  # untouched: not even next_version
    [state] = json.loads(sandbox.cli("status", "-o", "json").out)["items"]
    assert state["state"] == "pending"
    assert state["reason"] == ("waiting: its maintenance window is closed until "
                               "2026-12-05T02:00+01:00")

    monkeypatch.setenv("CLMGIT_NOW", SATURDAY_NIGHT)
    r = sandbox.reconcile()
    assert r.code == 0, r.err
    assert "1 applied" in r.out
    [updated] = sandbox.clusters().values()
    assert updated.status.current_version.startswith(sandbox.versions[1])
    assert updated.status.applied_at == "2026-12-05T01:30:0" + updated.status.applied_at[-2:]


def test_ignore_window_starts_it_and_says_so(sandbox_factory,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox = sandbox_factory(1, edit=with_window)
    monkeypatch.setenv("CLMGIT_NOW", MONDAY)
    assert sandbox.reconcile().code == 0
    sandbox.commit_version(2)
    r = sandbox.reconcile("--ignore-window")
    assert r.code == 0, r.err
    assert "by --ignore-window" in r.out and "1 applied" in r.out
    [updated] = sandbox.clusters().values()
    assert updated.status.current_version.startswith(sandbox.versions[1])
    assert [p.type for p in updated.status.problems] == [IGNORED]


def on_alpha(records: list[dict]) -> None:
    for r in records:
        r["channel"] = "alpha"


def test_require_signed_pins_refuses_an_unsigned_pin_and_applies_a_signed_one(
        sandbox_factory, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("ssh-keygen") is None:
        pytest.skip("ssh-keygen is not installed")
    sandbox = sandbox_factory(1, edit=on_alpha)
    key = tmp_path / "ada"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ada", "-f", str(key)],
                   check=True)
    git = sandbox.builder.git
    git("config", "gpg.format", "ssh")
    git("config", "user.signingKey", str(key))
    sandbox.builder.commit("main", {"allowed_signers": f"ada@example.org "
                                    f"{key.with_suffix('.pub').read_text()}"}, "Allow ada")
    assert sandbox.cli("promote", "dev", "alpha", "--force").code == 0  # unsigned
    unsigned = git("rev-parse", "main")

    r = sandbox.reconcile("--require-signed-pins")
    assert r.code == 6, r.err  # the cluster is blocked, named with its reason
    assert (f"the pin of channel 'alpha' was moved by {unsigned[:7]} by Ada Platform "
            "<ada@example.org>: it is not signed") in r.out
    [cluster] = sandbox.clusters().values()
    assert cluster.status.current_version == ""  # nothing applied

    sandbox.commit_version(2)
    assert sandbox.cli("promote", "dev", "alpha", "--force", "--sign").code == 0
    r = sandbox.reconcile("--require-signed-pins")
    assert r.code == 0, r.err
    [cluster] = sandbox.clusters().values()
    assert cluster.status.current_version.startswith(sandbox.versions[1])
