"""What clmgit's reconcile writes into clusters.yaml reads back, with CLM's semantics, to the
same records and versions: a CLM reading the file after clmgit sees every cluster in sync."""

from __future__ import annotations

import copy

import yaml

from clmgit.model import Cluster, ClusterStatus
from clmgit.reconcile.plan import IN_SYNC, plan
from clmgit.reconcile.run import Reconciler
from clmgit.registry.file import FileRegistry
from clmgit.registry.records import load_written
from tests.helpers.clm_records import BASE, OWN, SHA, clm_version, decoded, own_record


class Engine:
    def __init__(self) -> None:
        self.calls = 0

    def apply(self, cluster: Cluster, sha: str, *, dry_run: bool = False):
        self.calls += 1
        return type("Report", (), {"changes": []})()

    def decommission(self, cluster: Cluster, *, dry_run: bool = False):
        raise AssertionError("no decommission here")


def _pin(cluster: Cluster) -> tuple[str, str]:
    return SHA, "default"


def _records() -> list[dict]:
    records = []
    for i, name in enumerate(sorted(OWN)):
        r = own_record(name)
        if r.get("lifecycle_status") == "decommission-requested":
            continue
        r.pop("status", None)
        r["id"] = f"aws:123456789012:eu-central-1:c{i}"
        r["alias"] = f"c{i}"
        if r.get("local_id"):
            r["local_id"] = f"c{i}"
        if r.get("api_server_url") == BASE["api_server_url"]:
            r["api_server_url"] = f"https://c{i}.foo.example.org/"  # one cluster per server
        records.append(r)
    return records


def test_a_file_written_by_reconcile_reads_back_to_the_same_records_and_versions(tmp_path):
    path = tmp_path / "clusters.yaml"
    path.write_text(yaml.safe_dump({"clusters": _records()}, allow_unicode=True, sort_keys=False))
    reg = FileRegistry(path)
    engine = Engine()
    Reconciler(reg, engine).run([plan(c, _pin) for c in reg.clusters()], concurrency=2)
    assert engine.calls == len(_records())

    # CLM's reading of the written file: every string as written, the versions recorded equal
    # what CLM's Version computes over the records now in the file.
    written = load_written(path.read_bytes(), "clusters.yaml")["clusters"]
    for raw in written:
        plain = yaml.safe_load(yaml.safe_dump(copy.deepcopy(_plain(raw))))
        status = plain["status"]
        assert plain["lifecycle_status"] in ("ready", "decommissioned")
        assert status["current_version"] == clm_version(SHA, decoded(plain)), plain["id"]
        assert status["next_version"] == "" and status["problems"] == []
    # And clmgit agrees: nothing left to do, no second update.
    again = [plan(c, _pin) for c in reg.clusters()]
    assert {t.action for t in again} == {IN_SYNC}


def test_next_version_equal_to_current_version_is_not_updating(tmp_path):
    path = tmp_path / "clusters.yaml"
    path.write_text(yaml.safe_dump({"clusters": [own_record("no-discount")]}))
    [c] = FileRegistry(path).clusters()
    version = clm_version(SHA, decoded(own_record("no-discount")))
    from dataclasses import replace

    settled = replace(c, status=ClusterStatus(current_version=version, next_version=version))
    assert plan(settled, _pin).action == IN_SYNC
    moving = replace(settled, status=ClusterStatus(current_version=version,
                                                   next_version=f"{'0' * 40}#x"))
    assert plan(moving, _pin).action != IN_SYNC


def _plain(value):
    """Scalars to their text (strings) or number (integers), as CLM's fields hold them."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    resolved = getattr(value, "resolved", value)
    if resolved is None:
        return None
    if isinstance(resolved, int) and not isinstance(resolved, bool):
        return resolved
    return str(value)
