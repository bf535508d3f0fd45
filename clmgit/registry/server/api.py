"""The Cluster Registry API (docs/reference/registry-api.md) without the web framework: validated
data in, a Starlette `Response` out. `routes` maps operations onto these methods; bodies reach
them already checked against `models`.

Leases (clmgit's addition, for reconcilers sharing a registry) are part of a cluster's PATCH:
`"lease": {"holder": H, "ttl_seconds": T}` takes or renews it (409 `lease-held`, naming the
holder, while another holder's lease runs; `"take_over": G` takes it from G anyway, for a
client that knows G's process is dead), `"lease": null` gives it up — only its holder may
(header `Clmgit-Lease-Holder: H`), or anyone once it has expired. The header also makes any
write conditional on H holding the lease (409 `lease-lost` otherwise). `If-Match` with the ETag
of a read makes a write conditional on nothing having changed since (412 otherwise). Time is the
server's, so reconcilers on machines with skewed clocks still agree.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from starlette.responses import Response

from clmgit.registry.server import validate
from clmgit.registry.server.db import Database, Tx
from clmgit.registry.server.problems import (
    LEASE_HELD,
    LEASE_LOST,
    Problem,
    bad_request,
    conflict,
    not_found,
)
from clmgit.registry.server.rows import (
    COLUMNS,
    NAMING,
    Row,
    check_clashes,
    dumps,
    insert,
    item_json,
    lock_names,
    save,
    timestamp,
)


@dataclass(frozen=True)
class Conditions:
    """What a write is conditional on: `If-Match` and `Clmgit-Lease-Holder`, when sent."""

    if_match: str | None = None
    holder: str | None = None


def json_response(status: int, value: Any, *, etag: str | None = None) -> Response:
    text = value if isinstance(value, str) else dumps(value)
    return Response(text, status, {"ETag": etag} if etag else {}, "application/json")


class RegistryAPI:
    def __init__(self, db: Database, *, clock: Callable[[], float] = time.time) -> None:
        self.db, self.clock = db, clock

    # --- clusters -------------------------------------------------------------------------------

    def list_clusters(
        self, where: Mapping[str, str | int], *, verbose: bool = True,
        cost_center: str | None = None,
    ) -> Response:
        """`where`: columns and values to match; `cost_center` is that of a cluster's
        infrastructure account (as in CLM's API)."""
        sql = f"SELECT {COLUMNS} FROM clusters"
        if where:
            sql += " WHERE " + " AND ".join(f"{column} = ?" for column in where)
        with self.db.transaction() as tx:
            rows = tx.all(sql + " ORDER BY seq, id", list(where.values()))
            if cost_center is not None:
                accounts = {
                    aid for aid, doc in tx.all("SELECT id, doc FROM infrastructure_accounts")
                    if json.loads(doc).get("cost_center") == cost_center
                }
                rows = [r for r in rows if json.loads(r[1])["infrastructure_account"] in accounts]
        items = (item_json(row, verbose=verbose) for row in rows)
        return json_response(200, '{"items":[' + ",".join(items) + "]}")

    def create_cluster(self, body: dict[str, Any]) -> Response:
        created_at = body.pop("created_at", None)
        full = validate.normal_cluster(body)
        stamp = timestamp(self.clock()) if created_at is None else _iso(created_at)
        cid = full["id"]
        with self.db.transaction() as tx:
            lock_names(tx)
            check_clashes(tx, full)
            if not insert(tx, full, created_at=stamp):
                raise conflict(f"cluster {cid} exists already; PATCH it instead")
            row = self._read(tx, cid, lock=False)
        return json_response(201, row.as_json(), etag=row.etag)

    def get_cluster(self, cid: str, *, verbose: bool = True) -> Response:
        row = self._get(cid)
        return json_response(200, row.as_json(verbose=verbose), etag=row.etag)

    def patch_cluster(self, cid: str, patch: dict[str, Any], cond: Conditions) -> Response:
        named = patch.pop("id", cid)
        if named != cid:
            raise bad_request(f"the body names cluster {named!r}, the path {cid!r}")
        has_lease = "lease" in patch
        lease = patch.pop("lease", None)
        status = patch.pop("status", None)

        def change(row: Row) -> None:
            row.doc.update(patch)
            if status is not None:
                row.status = status
            if has_lease:
                self._set_lease(row, lease, cond)

        row = self._modify(cid, cond, change, renames=not NAMING.isdisjoint(patch))
        return json_response(200, row.as_json(), etag=row.etag)

    def delete_cluster(self, cid: str, cond: Conditions) -> Response:
        with self.db.transaction() as tx:
            self._check(cond, self._read(tx, cid, lock=True))
            tx.run("DELETE FROM clusters WHERE id = ?", [cid])
        return Response(status_code=204)

    def _set_lease(self, row: Row, lease: Mapping[str, Any] | None, cond: Conditions) -> None:
        now = self.clock()
        if lease is None:
            if row.holder is not None and cond.holder != row.holder and row.lease_running(now):
                raise self._held(row, now, "only its holder may release it")
            row.holder = row.expires = None
            return
        taken_over = row.holder is not None and row.holder == lease.get("take_over")
        if row.lease_held_by_other(lease["holder"], now) and not taken_over:
            raise self._held(row, now, None)
        row.holder, row.expires = lease["holder"], now + float(lease["ttl_seconds"])

    @staticmethod
    def _held(row: Row, now: float, why: str | None) -> Problem:
        until = timestamp(row.expires or now)
        return conflict(
            f"the lease of {row.id} is held by {row.holder} until {until}"
            + (f"; {why}" if why else ""),
            type_=LEASE_HELD,
            extra={"holder": row.holder, "expires_at": until},
        )

    # --- config items and node pools -----------------------------------------------------------

    def put_item(self, cid: str, pool: str | None, key: str, value: str,
                 cond: Conditions) -> Response:
        """Set a config item of the cluster, or of its node pool `pool`."""
        row = self._modify(cid, cond, lambda row: _items(row, pool).update({key: value}))
        return json_response(200, {"value": value}, etag=row.etag)

    def delete_item(self, cid: str, pool: str | None, key: str, cond: Conditions) -> Response:
        def change(row: Row) -> None:
            if _items(row, pool).pop(key, None) is None:
                raise not_found(f"no config item {key}")

        self._modify(cid, cond, change)
        return Response(status_code=204)

    def list_pools(self, cid: str) -> Response:
        row = self._get(cid)
        return json_response(200, {"items": row.doc["node_pools"]}, etag=row.etag)

    def get_pool(self, cid: str, name: str) -> Response:
        row = self._get(cid)
        return json_response(200, _pool(row, name), etag=row.etag)

    def put_pool(self, cid: str, name: str, body: dict[str, Any], cond: Conditions) -> Response:
        if body.get("name", name) != name:
            raise bad_request(f"the body names node pool {body['name']!r}, the path {name!r}")
        pool = validate.normal_node_pool({**body, "name": name})
        created = False

        def change(row: Row) -> None:
            nonlocal created
            pools = row.doc["node_pools"]
            index = next((i for i, p in enumerate(pools) if p["name"] == name), None)
            created = index is None
            if index is None:
                pools.append(pool)
            else:
                pools[index] = pool

        row = self._modify(cid, cond, change)
        return json_response(201 if created else 200, _pool(row, name), etag=row.etag)

    def patch_pool(self, cid: str, name: str, body: dict[str, Any], cond: Conditions) -> Response:
        if body.get("name", name) != name:
            raise bad_request(f"the body names node pool {body['name']!r}, the path {name!r}")

        def change(row: Row) -> None:
            pool = _pool(row, name)
            merged = {**pool, **body}
            if merged["max_size"] < merged["min_size"]:
                raise bad_request("max_size must not be below min_size")
            pool.update(validate.normal_node_pool(merged))

        row = self._modify(cid, cond, change)
        return json_response(200, _pool(row, name), etag=row.etag)

    def delete_pool(self, cid: str, name: str, cond: Conditions) -> Response:
        def change(row: Row) -> None:
            _pool(row, name)
            row.doc["node_pools"] = [p for p in row.doc["node_pools"] if p["name"] != name]

        self._modify(cid, cond, change)
        return Response(status_code=204)

    # --- infrastructure accounts ---------------------------------------------------------------

    def list_accounts(self, where: Mapping[str, str | int]) -> Response:
        """Accounts are few (one per cloud account), so filters are applied here, not in SQL."""
        with self.db.transaction() as tx:
            docs = [json.loads(d) for (d,) in tx.all(
                "SELECT doc FROM infrastructure_accounts ORDER BY id")]
        chosen = [d for d in docs if all(d.get(k) == v for k, v in where.items())]
        return json_response(200, {"items": chosen})

    def create_account(self, account: dict[str, Any]) -> Response:
        with self.db.transaction() as tx:
            count = tx.run(
                "INSERT INTO infrastructure_accounts (id, doc) VALUES (?, ?)"
                " ON CONFLICT (id) DO NOTHING",
                [account["id"], dumps(account)],
            )
        if count != 1:
            raise conflict(f"infrastructure account {account['id']} exists already")
        return json_response(201, account)

    def get_account(self, aid: str) -> Response:
        with self.db.transaction() as tx:
            return json_response(200, self._account(tx, aid, lock=False))

    def patch_account(self, aid: str, patch: dict[str, Any]) -> Response:
        named = patch.pop("id", aid)
        if named != aid:
            raise bad_request(f"the body names account {named!r}, the path {aid!r}")
        with self.db.transaction() as tx:
            account = {**self._account(tx, aid, lock=True), **patch}
            tx.run(
                "UPDATE infrastructure_accounts SET doc = ? WHERE id = ?",
                [dumps(account), aid],
            )
        return json_response(200, account)

    def _account(self, tx: Tx, aid: str, *, lock: bool) -> dict[str, Any]:
        found = tx.one(
            "SELECT doc FROM infrastructure_accounts WHERE id = ?"
            + (tx.for_update if lock else ""),
            [aid],
        )
        if found is None:
            raise not_found(f"no infrastructure account {aid}")
        return dict(json.loads(found[0]))

    # --- the one read-check-change-write cycle -------------------------------------------------

    def _get(self, cid: str) -> Row:
        with self.db.transaction() as tx:
            return self._read(tx, cid, lock=False)

    def _read(self, tx: Tx, cid: str, *, lock: bool) -> Row:
        found = tx.one(
            f"SELECT {COLUMNS} FROM clusters WHERE id = ?" + (tx.for_update if lock else ""), [cid]
        )
        if found is None:
            raise not_found(f"no cluster {cid} in the registry")
        return Row.from_db(found)

    def _modify(self, cid: str, cond: Conditions, change: Callable[[Row], object], *,
                renames: bool = False) -> Row:
        """Lock the row, check the request's preconditions, change, normalise and save it.
        `renames`: the change may touch a field records are told apart by (checked against
        the others)."""
        with self.db.transaction() as tx:
            if renames:
                lock_names(tx)
            row = self._read(tx, cid, lock=True)
            self._check(cond, row)
            change(row)
            row.normalise()
            if renames:
                check_clashes(tx, {**row.doc, "id": row.id})
            save(tx, row)
        return row

    def _check(self, cond: Conditions, row: Row) -> None:
        if cond.if_match is not None and not etag_matches(cond.if_match, row.etag):
            raise Problem(
                412,
                "Precondition Failed",
                f"cluster {row.id} changed since it was read (now ETag {row.etag}); read it again",
            )
        if cond.holder is not None and row.holder != cond.holder:
            now_held = f"held by {row.holder}" if row.holder else "free"
            raise conflict(
                f"the lease of {row.id} is not {cond.holder}'s any more: it is {now_held}",
                type_=LEASE_LOST,
            )


_ENTITY_TAG = re.compile(r'(W/)?("[^"]*")')


def etag_matches(if_match: str, etag: str) -> bool:
    """If-Match (RFC 9110 §13.1.1): `*`, or a list of entity tags of which one is `etag` by the
    strong comparison (a weak tag never matches)."""
    if if_match.strip() == "*":
        return True
    return any(not weak and tag == etag for weak, tag in _ENTITY_TAG.findall(if_match))


def _iso(moment: datetime) -> str:
    """A creation time as given, in UTC (a time without a zone is taken to be UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _pool(row: Row, name: str) -> dict[str, Any]:
    pools: list[dict[str, Any]] = row.doc["node_pools"]
    for pool in pools:
        if pool["name"] == name:
            return pool
    raise not_found(f"cluster {row.id} has no node pool {name}")


def _items(row: Row, pool: str | None) -> dict[str, str]:
    """The config items of the cluster, or of its node pool `pool`."""
    items: dict[str, str] = (row.doc if pool is None else _pool(row, pool))["config_items"]
    return items
