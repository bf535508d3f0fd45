"""A cluster row as the handlers change it, and its JSON form on the wire.

Handlers read a row under a lock, change `doc`, `status` or the lease, and save it with the
version increased by one; the version is the ETag that `If-Match` compares against.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from clmgit.registry.records import api_server_key
from clmgit.registry.server import validate
from clmgit.registry.server.db import Tx
from clmgit.urls import url_host


def dumps(value: Any) -> str:
    """Compact JSON: lists of thousands of records are a fifth smaller without the spaces."""
    return json.dumps(value, separators=(",", ":"))


#: The columns read for a record, in the order `Row.from_db` and `item_json` expect.
COLUMNS = "id, doc, status, version, lease_holder, lease_expires, created_at"


@dataclass
class Row:
    id: str
    doc: dict[str, Any]
    status: dict[str, Any]
    version: int
    holder: str | None
    expires: float | None
    created_at: str | None = None

    @classmethod
    def from_db(cls, row: tuple[Any, ...]) -> Row:
        cid, doc, status, version, holder, expires, created_at = row
        return cls(cid, json.loads(doc), json.loads(status), int(version), holder, expires,
                   created_at)

    @property
    def etag(self) -> str:
        return f'"{self.version}"'

    def normalise(self) -> None:
        """Every field present with CLM's defaults, after any change."""
        full = validate.normal_cluster({**self.doc, "status": self.status})
        self.status = full.pop("status")
        self.doc = full

    def lease_held_by_other(self, holder: str, now: float) -> bool:
        return self.holder not in (None, holder) and self.lease_running(now)

    def lease_running(self, now: float) -> bool:
        return self.holder is not None and (self.expires or 0.0) > now

    def as_json(self, *, verbose: bool = True) -> str:
        return item_json(
            (self.id, dumps(self.doc), dumps(self.status), self.version, self.holder,
             self.expires, self.created_at),
            verbose=verbose,
        )


def item_json(row: tuple[Any, ...], *, verbose: bool = True) -> str:
    """The wire form of a row as read from the database, without decoding its JSON columns
    (lists of thousands are answered by joining strings). `verbose=False` leaves out config
    items and node pools, as CLM's API does."""
    _, doc, status, _, holder, expires, created_at = row
    if not verbose:
        brief = json.loads(doc)
        del brief["config_items"], brief["node_pools"]
        doc = dumps(brief)
    lease = "null" if holder is None else dumps(
        {"holder": holder, "expires_at": timestamp(expires)}
    )
    created = "" if created_at is None else f',"created_at":{dumps(created_at)}'
    # `doc` is a JSON object that always has an id, so it ends in "}" and is never "{}".
    return f'{doc[:-1]},"status":{status},"lease":{lease}{created}}}'


#: The latest time a timestamp is written as; leases stored before TTLs were bounded may lie
#: beyond it, and must still be readable.
_LATEST = datetime(9999, 12, 31, tzinfo=UTC).timestamp()


def timestamp(epoch: float) -> str:
    moment = datetime.fromtimestamp(min(max(epoch, 0.0), _LATEST), UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def insert(tx: Tx, full: dict[str, Any], *, created_at: str) -> bool:
    """Store a new normalised record (status included); False if its id exists already."""
    status = full.pop("status")
    count = tx.run(
        "INSERT INTO clusters (seq, id, alias, api_server_url, channel, criticality_level,"
        " environment, infrastructure_account, lifecycle_status, local_id, provider, region,"
        " doc, status, version, created_at)"
        " VALUES ((SELECT COALESCE(MAX(seq), 0) + 1 FROM clusters),"
        " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?) ON CONFLICT (id) DO NOTHING",
        [full["id"], *_filter_values(full), dumps(full), dumps(status), created_at],
    )
    return count == 1


def save(tx: Tx, row: Row) -> None:
    """Write a changed row back, one version up."""
    row.version += 1
    tx.run(
        "UPDATE clusters SET alias = ?, api_server_url = ?, channel = ?, criticality_level = ?,"
        " environment = ?, infrastructure_account = ?, lifecycle_status = ?, local_id = ?,"
        " provider = ?, region = ?, doc = ?, status = ?, version = ?, lease_holder = ?,"
        " lease_expires = ? WHERE id = ?",
        [*_filter_values(row.doc), dumps(row.doc), dumps(row.status), row.version,
         row.holder, row.expires, row.id],
    )


#: The fields a record is named or told apart by (see `validate.check_clashes`).
NAMING = frozenset({"id", "alias", "infrastructure_account", "local_id", "api_server_url"})
#: The PostgreSQL advisory lock that writes changing NAMING fields take first, so that two of
#: them cannot both pass the clash check. (SQLite serialises every write transaction anyway.)
_NAMES_LOCK = 0x636C6D67


def lock_names(tx: Tx) -> None:
    """Taken before any row is read, so its order against row locks is always the same."""
    if tx.postgres:
        tx.run("SELECT pg_advisory_xact_lock(?)", [_NAMES_LOCK])


def check_clashes(tx: Tx, doc: dict[str, Any]) -> None:
    """A 409 if the normalised record `doc` would clash with a stored one (only the records
    that could clash are read)."""
    sql = ("SELECT doc FROM clusters WHERE id <> ? AND (alias = ? OR alias = ? OR id = ?"
           " OR (infrastructure_account = ? AND local_id = ? AND local_id <> '')")
    params = [doc["id"], doc["alias"], doc["id"], doc["alias"], doc["infrastructure_account"],
              doc["local_id"]]
    key = api_server_key(doc["api_server_url"])
    if key is not None:
        # URLs are compared normalised (`records.api_server_key`), which SQL cannot do: it
        # picks the records whose URL holds the key's host (all of the key if it has none) in
        # any case, the comparison is exact. A `_` or `%` in the host only widens the pick.
        host = url_host(key) or key.lower()
        sql += " OR LOWER(api_server_url) LIKE ?"
        params.append(f"%{host}%")
    found = tx.all(sql + ")", params)
    validate.check_clashes(doc, (json.loads(other) for (other,) in found))


def _filter_values(doc: dict[str, Any]) -> list[Any]:
    return [doc[name] for name in validate.FILTERS]
