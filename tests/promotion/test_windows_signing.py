"""Promotion windows and signed versions through the real CLI, on a real repo: the clock set by
`CLMGIT_NOW` (never a sleep), real `ssh-keygen` keys, git's own signing and verification."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.fleet import Fleet, default_records
from tests.helpers.promotion import applied, last_message, pins
from tests.helpers.signing import keygen, needs_ssh_keygen, signed_commit
from tests.helpers.sources import CHANNELS, two_sources

ALPHA = """\
channel: alpha
branch: alpha
source: dev
gates:
  applied_in_source: true
windows:
  timezone: Europe/Berlin
  allow: ["Mon-Thu 09:00-16:00"]
  deny: ["12-20..01-06"]
groups:
  - name: default
"""


@pytest.fixture
def windowed(fleet: Fleet) -> Fleet:
    fleet.builder.commit("main", {"channels/alpha.yaml": ALPHA}, "alpha: promotion windows")
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    return fleet


@pytest.mark.parametrize(("now", "opens"), [
    # Friday before the clocks go forward: the next opening is summer time.
    ("2026-03-27T17:00:00+01:00", "2026-03-30T09:00+02:00"),
    # The Friday before the holiday freeze: it opens after the new year.
    ("2026-12-18T17:00:00+01:00", "2027-01-07T09:00+01:00"),
    # Friday before the clocks go back, in UTC.
    ("2026-10-23T15:00:00Z", "2026-10-26T09:00+01:00"),
])
def test_outside_its_window_a_promotion_names_the_next_opening(
        windowed: Fleet, monkeypatch: pytest.MonkeyPatch, now: str, opens: str) -> None:
    before = windowed.branch("main")
    monkeypatch.setenv("CLMGIT_NOW", now)
    r = windowed.cli("promote", "dev", "alpha")
    assert r.code == 1, r.out
    assert f"the next opens at {opens} (--force overrides)" in r.err
    assert "outside the promotion windows of 'alpha'" in r.err and "Mon-Thu 09:00-16:00" in r.err
    assert r.err.count("\n") == 1 and windowed.branch("main") == before
    rows = json.loads(windowed.cli("status", "--by", "group", "-o", "json").out)["items"]
    [alpha] = [row for row in rows if row["channel"] == "alpha"]
    assert alpha["window"] == f"closed until {opens}" and alpha["gate"] == "refused"
    assert all(row["window"] == "" for row in rows if row["channel"] != "alpha")
    report = windowed.cli("report", "--markdown")
    assert report.code == 0 and f"no, closed until {opens}" in report.out


def test_force_lands_it_recorded_and_inside_the_window_it_lands_plainly(
        windowed: Fleet, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLMGIT_NOW", "2026-12-18T17:00:00+01:00")
    r = windowed.cli("promote", "dev", "alpha", "--force")
    assert r.code == 0, r.err
    message = last_message(windowed)
    assert "Clmgit-Override: force" in message and "Clmgit-Override: window" in message
    assert 'promoted_at: "2026-12-18T16:00:0' in windowed.file("channels/alpha.yaml")
    history = windowed.cli("history", "alpha", "-o", "json")
    assert history.code == 0 and '"window"' in history.out
    windowed.builder.commit("dev", {"cluster/stack.yaml": "v: 4\n"}, "Raise the version to 4")
    c4 = windowed.branch("dev")
    windowed.set_clusters(applied(default_records(), "dev", c4))
    monkeypatch.setenv("CLMGIT_NOW", "2027-01-07T09:00:00+01:00")  # the first minute open
    r = windowed.cli("promote", "dev", "alpha")
    assert r.code == 0, r.err
    assert pins(windowed, "alpha") == {"default": c4}
    assert "Clmgit-Override" not in last_message(windowed)


def test_rollback_keeps_to_the_windows_too(windowed: Fleet,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLMGIT_NOW", "2027-01-07T10:00:00+01:00")
    assert windowed.cli("promote", "dev", "alpha").code == 0
    monkeypatch.setenv("CLMGIT_NOW", "2027-01-08T10:00:00+01:00")  # a Friday
    r = windowed.cli("rollback", "alpha", "--to", windowed.c1)
    assert r.code == 1 and "the next opens at 2027-01-11T09:00+01:00" in r.err
    assert windowed.cli("rollback", "alpha", "--to", windowed.c1, "--force").code == 0
    assert "Clmgit-Override: window" in last_message(windowed)


def test_a_bad_window_or_clock_is_one_sentence(windowed: Fleet,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    windowed.builder.commit("main", {"channels/alpha.yaml": ALPHA.replace("Mon-Thu", "Mon-Thr")},
                            "a typo")
    r = windowed.cli("promote", "dev", "alpha")
    assert r.code == 1 and r.err.count("\n") == 1
    assert "channels/alpha.yaml: windows.allow: 'Mon-Thr 09:00-16:00' is not a window" in r.err
    monkeypatch.setenv("CLMGIT_NOW", "next friday")
    r = windowed.cli("status")
    assert r.code == 1 and "CLMGIT_NOW='next friday' is not an ISO 8601 time" in r.err


# --- signed versions -----------------------------------------------------------------------------

@pytest.fixture
def keys(tmp_path: Path) -> tuple[Path, Path]:
    return keygen(tmp_path / "ada", "ada"), keygen(tmp_path / "eve", "eve")


def allow(fleet: Fleet, key: Path, *, required: bool = False) -> None:
    """The allowed signers on the control branch, and `signed_source` on alpha."""
    line = f"ada@example.org {key.with_suffix('.pub').read_text().strip()}\n"
    settings = "signing:\n  allowed_signers: .clmgit/allowed_signers\n"
    if required:
        settings += "  require_signed_pins: true\n"
    fleet.builder.commit("main", {
        ".clmgit/allowed_signers": line, "clmgit.yaml": settings,
        "channels/alpha.yaml": ALPHA.split("windows:")[0].replace(
            "applied_in_source: true", "applied_in_source: true\n  signed_source: true")
        + "groups:\n  - name: default\n"}, "Allow ada's key")


@needs_ssh_keygen
def test_signed_source_refuses_an_unsigned_sha_and_takes_a_signed_one(
        fleet: Fleet, keys: tuple[Path, Path]) -> None:
    ada, eve = keys
    allow(fleet, ada)
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    r = fleet.cli("promote", "dev", "alpha")
    assert r.code == 1
    assert (f"'alpha' takes only commits signed by a key in .clmgit/allowed_signers: "
            f"{fleet.c3[:7]} by Ada Platform <ada@example.org>: it is not signed") in r.err
    by_eve = signed_commit(fleet, "dev", eve, "cluster/stack.yaml", "v: 4\n")
    fleet.set_clusters(applied(default_records(), "dev", by_eve))
    r = fleet.cli("promote", "dev", "alpha")
    assert r.code == 1 and "signed by a key that is not in the allowed signers" in r.err
    by_ada = signed_commit(fleet, "dev", ada, "cluster/stack.yaml", "v: 5\n")
    fleet.set_clusters(applied(default_records(), "dev", by_ada))
    r = fleet.cli("promote", "dev", "alpha")
    assert r.code == 0, r.err
    assert pins(fleet, "alpha") == {"default": by_ada}


@needs_ssh_keygen
def test_signed_source_all_looks_at_every_commit_brought(
        fleet: Fleet, keys: tuple[Path, Path]) -> None:
    ada, _ = keys
    allow(fleet, ada)
    text = fleet.file("channels/alpha.yaml").replace("signed_source: true", "signed_source: all")
    fleet.builder.commit("main", {"channels/alpha.yaml": text}, "all of it")
    by_ada = signed_commit(fleet, "dev", ada, "cluster/stack.yaml", "v: 4\n")
    fleet.set_clusters(applied(default_records(), "dev", by_ada))
    r = fleet.cli("promote", "dev", "alpha")
    assert r.code == 1 and f"{fleet.c3[:7]} by Ada Platform" in r.err  # brought along, unsigned
    assert f"{by_ada[:7]} by" not in r.err


@needs_ssh_keygen
def test_promote_signs_with_sign_and_when_git_is_set_to(
        fleet: Fleet, keys: tuple[Path, Path]) -> None:
    ada, _ = keys
    fleet.set_clusters(applied(default_records(), "dev", fleet.c3))
    git = fleet.builder.git
    git("config", "gpg.format", "ssh")
    git("config", "user.signingKey", str(ada))
    signers = fleet.path.parent / "allowed"
    signers.write_text(f"ada@example.org {ada.with_suffix('.pub').read_text()}")
    assert fleet.cli("promote", "dev", "alpha", "--sign").code == 0
    verify = ["-c", f"gpg.ssh.allowedSignersFile={signers}", "log", "-1", "--format=%G?"]
    assert git(*verify, "main") == "G"
    assert fleet.cli("freeze", "alpha", "--reason", "unsigned").code == 0
    assert git(*verify, "main") == "N"  # git is not set to sign; no --sign
    git("config", "commit.gpgSign", "true")
    assert fleet.cli("unfreeze", "alpha").code == 0
    assert git(*verify, "main") == "G"


@needs_ssh_keygen
def test_signed_source_with_several_sources_verifies_each_in_its_repository(
        tmp_path: Path, keys: tuple[Path, Path]) -> None:
    ada, _ = keys
    beta = CHANNELS["channels/beta.yaml"].replace("applied_in_source: true",
                                                  "signed_source: true")
    repos = two_sources(tmp_path, main_tree={"cluster/stack.yaml": "v: 1\n"},
                        addons_tree={"cluster/manifests/app/cm.yaml": "kind: ConfigMap\n"},
                        records=[], channels={**CHANNELS, "channels/beta.yaml": beta})
    repos.main.commit("main", {"allowed_signers": f"ada@example.org "
                               f"{ada.with_suffix('.pub').read_text()}"}, "Allow ada")
    signed_commit(repos.main.path, "dev", ada, "cluster/stack.yaml", "v: 2\n")
    unsigned = repos.addons.commit("dev", {"cluster/manifests/app/cm.yaml": "kind: Secret\n"},
                                   "Addons v2")
    r = run_cli("--repo", str(repos.main.path), "promote", "dev", "beta")
    assert r.code == 1
    assert "source 'addons': 'beta' takes only commits signed" in r.err
    assert f"{unsigned[:7]} by Ada Platform <ada@example.org>: it is not signed" in r.err
    assert "source 'main'" not in r.err
    signed_commit(repos.addons.path, "dev", ada, "cluster/manifests/app/cm.yaml", "kind: X\n")
    r = run_cli("--repo", str(repos.main.path), "promote", "dev", "beta")
    assert r.code == 0, r.err
