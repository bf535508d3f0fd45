"""The file registry's writes: in-place edits that keep people's formatting, leases, atomic
replacement, and two processes writing at once."""

from __future__ import annotations

import multiprocessing
import os
import socket
from pathlib import Path

import pytest
import yaml

from clmgit.errors import RegistryError
from clmgit.machine import process_namespace
from clmgit.model import ClusterStatus, Problem
from clmgit.registry import LeaseLost, new_holder
from clmgit.registry.file import FileRegistry
from clmgit.registry.filedoc import set_fields

HAND_WRITTEN = """\
# Our clusters. Keep this comment.
clusters:
  - id: aws:1:eu-central-1:a     # the first one
    alias: 'a'
    api_server_url: https://a.example.org
    channel: dev
    lifecycle_status: "requested"   # quoted on purpose
    config_items:
      team: "platform"
    node_pools:
      - name: default
        profile: worker-default
        instance_types: [m5.large]
    # no status yet
  - id: aws:1:eu-central-1:b
    alias: b
    api_server_url: https://b.example.org
    channel: beta
    status:
      current_version: ''
      problems: []
    config_items: {log_level: debug}   # flow style stays
# trailing comment
"""

DONE = ClusterStatus(current_version="a" * 40 + "#hash", last_version="", next_version="",
                     problems=(Problem("t", "title: with colon", "two\nlines"),))


def registry(tmp_path: Path, text: str = HAND_WRITTEN, **kwargs) -> FileRegistry:
    path = tmp_path / "clusters.yaml"
    path.write_text(text)
    return FileRegistry(path, **kwargs)


def test_a_status_write_changes_only_that_status_and_keeps_every_other_byte(tmp_path):
    reg = registry(tmp_path)
    assert reg.acquire("aws:1:eu-central-1:b", "me", 60) is not None
    reg.record("aws:1:eu-central-1:b", "me", status=DONE, release=True)

    new = reg.path.read_text()
    before, after = HAND_WRITTEN.split("    status:\n")[0], HAND_WRITTEN.split("problems: []\n")[1]
    assert new.startswith(before + "    status:\n      current_version: " + "a" * 40 + "#hash\n")
    assert new.endswith(after)
    [_, b] = reg.clusters()
    assert b.status == DONE
    assert b.config_items == {"log_level": "debug"}


def test_a_missing_status_and_a_lifecycle_change_keep_quotes_and_comments(tmp_path):
    reg = registry(tmp_path)
    reg.acquire("aws:1:eu-central-1:a", "me", 60)
    reg.record("aws:1:eu-central-1:a", "me", status=DONE, lifecycle_status="ready")

    new = reg.path.read_text()
    assert 'lifecycle_status: "ready"   # quoted on purpose\n' in new
    assert "instance_types: [m5.large]\n    status:\n      current_version: " in new
    assert "\n    # no status yet\n  - id: aws:1:eu-central-1:b\n" in new
    assert new.count("# Our clusters. Keep this comment.") == 1
    assert new.endswith("# trailing comment\n")
    a = reg.clusters()[0]
    assert (a.lifecycle_status, a.status) == ("ready", DONE)
    # Everything but the two edits is byte for byte the same.
    old_lines = HAND_WRITTEN.splitlines()
    new_lines = new.splitlines()
    assert [x for x in old_lines if x not in new_lines] == [
        '    lifecycle_status: "requested"   # quoted on purpose']


def test_a_record_in_flow_style_is_refused_and_the_file_is_left_alone(tmp_path):
    text = "clusters:\n- {id: c, channel: dev, api_server_url: 'https://c.example.org'}\n"
    reg = registry(tmp_path, text)
    reg.acquire("c", "me", 60)
    with pytest.raises(RegistryError, match="flow style"):
        reg.record("c", "me", status=DONE)
    assert reg.path.read_text() == text


def test_an_unknown_cluster_is_an_error(tmp_path):
    reg = registry(tmp_path)
    with pytest.raises(RegistryError, match="no cluster 'nope'"):
        reg.acquire("nope", "me", 60)


def test_splice_result_equals_a_full_parse_with_the_change(tmp_path):
    new = set_fields(HAND_WRITTEN, "aws:1:eu-central-1:b", status={"current_version": "x"},
                     lifecycle_status="ready")
    old, now = yaml.safe_load(HAND_WRITTEN), yaml.safe_load(new)
    old["clusters"][1]["status"] = {"current_version": "x"}
    old["clusters"][1]["lifecycle_status"] = "ready"
    assert now == old


# --- leases ------------------------------------------------------------------------------------


def test_a_lease_is_exclusive_until_it_expires_and_then_taken_over(tmp_path):
    now = [1000.0]
    reg = registry(tmp_path, now=lambda: now[0])
    cid = "aws:1:eu-central-1:a"
    assert reg.acquire(cid, "host/1/x", 60) is not None
    assert reg.acquire(cid, "host/2/y", 60) is None
    assert reg.acquire(cid, "host/1/x", 60) is not None  # renewal by the holder
    now[0] += 61
    assert reg.acquire(cid, "host/2/y", 60) is not None
    with pytest.raises(LeaseLost):
        reg.record(cid, "host/1/x", status=DONE)
    assert reg.clusters()[0].status == ClusterStatus()  # nothing written by the loser


def test_a_lease_of_a_dead_process_on_this_machine_is_taken_at_once(tmp_path):
    proc = multiprocessing.get_context("fork").Process(target=os._exit, args=(0,))
    proc.start()
    proc.join()
    here, host = process_namespace(), socket.gethostname()
    assert here, "this machine tells its boot id and PID namespace"
    reg = registry(tmp_path)
    cid = "aws:1:eu-central-1:a"
    assert reg.acquire(cid, f"{host}/{proc.pid}/x/{here}", 3600) is not None
    assert reg.acquire(cid, f"{host}/{os.getpid()}/y/{here}", 60) is not None
    # A live holder keeps its lease.
    assert reg.acquire(cid, f"{host}/{os.getpid()}/z/{here}", 60) is None


@pytest.mark.parametrize("dead", [
    "{host}/{pid}/x/{boot}:1",  # same host name and boot, another PID namespace
    "{host}/{pid}/x/other-boot:{ns}",  # another boot of the machine (or another machine)
    "{host}/{pid}/x",  # a holder that does not say where its pid lives
    "elsewhere/{pid}/x",
])
def test_a_lease_whose_holder_is_not_knowably_dead_waits_for_expiry(tmp_path, dead):
    proc = multiprocessing.get_context("fork").Process(target=os._exit, args=(0,))
    proc.start()
    proc.join()
    boot, _, ns = process_namespace().partition(":")
    holder = dead.format(host=socket.gethostname(), pid=proc.pid, boot=boot, ns=ns)
    reg = registry(tmp_path)
    cid = "aws:1:eu-central-1:a"
    assert reg.acquire(cid, holder, 3600) is not None
    assert reg.acquire(cid, new_holder(), 60) is None


def test_leases_live_beside_the_file_not_in_it(tmp_path):
    reg = registry(tmp_path)
    reg.acquire("aws:1:eu-central-1:a", "me", 60)
    assert reg.path.read_text() == HAND_WRITTEN
    reg.record("aws:1:eu-central-1:a", "me", release=True)
    assert not (tmp_path / ".clusters.yaml.leases").exists()


# --- crashes and concurrent writers ------------------------------------------------------------


def test_a_crash_before_the_rename_leaves_the_old_file_and_no_debris(tmp_path, monkeypatch):
    reg = registry(tmp_path)
    reg.acquire("aws:1:eu-central-1:a", "me", 60)

    def crash(src, dst):
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        reg.record("aws:1:eu-central-1:a", "me", status=DONE)
    monkeypatch.undo()
    assert reg.path.read_text() == HAND_WRITTEN
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".tmp") == []


def _writer(path: str, ids: list[str], holder: str) -> None:
    reg = FileRegistry(Path(path))
    for cid in ids:
        assert reg.acquire(cid, holder, 60) is not None
        reg.record(cid, holder, status=ClusterStatus(current_version=f"v-{cid}"), release=True)


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    ids = [f"c{i}" for i in range(40)]
    text = "# many\nclusters:\n" + "".join(
        f"- id: {i}\n  api_server_url: https://{i}.example.org\n  channel: dev  # {i}\n"
        for i in ids)
    path = tmp_path / "clusters.yaml"
    path.write_text(text)
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(path), ids[k::2], f"w{k}")) for k in (0, 1)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0
    clusters = FileRegistry(path).clusters()
    assert [c.status.current_version for c in clusters] == [f"v-{i}" for i in ids]
    assert all(f"channel: dev  # {i}\n" in path.read_text() for i in ids)
