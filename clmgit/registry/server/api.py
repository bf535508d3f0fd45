"""The Cluster Registry API of DESIGN.md §8, independent of HTTP plumbing: a request in, a
response out. Routes are listed once in `ROUTES`; a test checks them against openapi.yaml.

Leases (clmgit's addition, for reconcilers sharing a registry) are part of a cluster's PATCH:
`"lease": {"holder": H, "ttl_seconds": T}` takes or renews it (409 `lease-held`, naming the
holder, while another holder's lease runs; `"take_over": G` takes it from G anyway, for a
client that knows G's process is dead), `"lease": null` gives it up, and the header
`Clmgit-Lease-Holder: H` makes any write conditional on H holding the lease (409 `lease-lost`
otherwise). `If-Match` with the
ETag of a read makes a write conditional on nothing having changed since (412 otherwise). Time
is the server's, so reconcilers on machines with skewed clocks still agree.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clmgit.registry.server import validate
from clmgit.registry.server.db import Database, Tx
from clmgit.registry.server.problems import (
    LEASE_HEADER,
    LEASE_HELD,
    LEASE_LOST,
    Problem,
    conflict,
    not_found,
)
from clmgit.registry.server.rows import (
    COLUMNS,
    Row,
    dumps,
    insert,
    item_json,
    save,
    timestamp,
)

OPENAPI = Path(__file__).parent.parent / "openapi.yaml"


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: Mapping[str, str] = field(default_factory=dict)
    #: Header names in lower case.
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""

    def json(self) -> Any:
        return validate.parse_json(self.body)


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


def json_response(status: int, value: Any, *, etag: str | None = None) -> Response:
    text = value if isinstance(value, str) else dumps(value)
    return Response(status, text.encode(), headers={"ETag": etag} if etag else {})


NO_CONTENT = Response(204)
Handler = Callable[..., Response]

#: (method, path template, handler name): the whole API.
ROUTES: tuple[tuple[str, str, str], ...] = (
    ("GET", "/openapi.yaml", "openapi"),
    ("GET", "/kubernetes-clusters", "list_clusters"),
    ("POST", "/kubernetes-clusters", "create_cluster"),
    ("GET", "/kubernetes-clusters/{cluster_id}", "get_cluster"),
    ("PATCH", "/kubernetes-clusters/{cluster_id}", "patch_cluster"),
    ("DELETE", "/kubernetes-clusters/{cluster_id}", "delete_cluster"),
    ("PUT", "/kubernetes-clusters/{cluster_id}/config-items/{key}", "put_item"),
    ("DELETE", "/kubernetes-clusters/{cluster_id}/config-items/{key}", "delete_item"),
    ("GET", "/kubernetes-clusters/{cluster_id}/node-pools", "list_pools"),
    ("GET", "/kubernetes-clusters/{cluster_id}/node-pools/{pool}", "get_pool"),
    ("PUT", "/kubernetes-clusters/{cluster_id}/node-pools/{pool}", "put_pool"),
    ("DELETE", "/kubernetes-clusters/{cluster_id}/node-pools/{pool}", "delete_pool"),
    ("PUT", "/kubernetes-clusters/{cluster_id}/node-pools/{pool}/config-items/{key}",
     "put_pool_item"),
    ("DELETE", "/kubernetes-clusters/{cluster_id}/node-pools/{pool}/config-items/{key}",
     "delete_pool_item"),
    ("GET", "/infrastructure-accounts", "list_accounts"),
    ("POST", "/infrastructure-accounts", "create_account"),
    ("GET", "/infrastructure-accounts/{account_id}", "get_account"),
    ("PATCH", "/infrastructure-accounts/{account_id}", "patch_account"),
)
#: Readable without a token: the API's description.
PUBLIC_PATHS = frozenset({"/openapi.yaml"})


def match(template: str, segments: list[str]) -> list[str] | None:
    """The path parameters if `segments` fit `template`, else None."""
    parts = template.strip("/").split("/")
    if len(parts) != len(segments):
        return None
    params = []
    for part, segment in zip(parts, segments, strict=True):
        if part.startswith("{"):
            if not segment:
                return None
            params.append(segment)
        elif part != segment:
            return None
    return params


class RegistryAPI:
    def __init__(self, db: Database, *, clock: Callable[[], float] = time.time) -> None:
        self.db, self.clock = db, clock

    def handle(self, request: Request, segments: list[str]) -> Response:
        """Route by path and method; `segments` are the path's decoded segments."""
        allowed = []
        for method, template, name in ROUTES:
            params = match(template, segments)
            if params is None:
                continue
            if method == request.method:
                handler: Handler = getattr(self, name)
                return handler(request, *params)
            allowed.append(method)
        if allowed:
            raise Problem(405, "Method Not Allowed", f"use {', '.join(allowed)} on {request.path}")
        raise not_found(f"no such resource: {request.path}")

    def openapi(self, request: Request) -> Response:
        return Response(200, OPENAPI.read_bytes(), content_type="application/yaml")

    # --- clusters -------------------------------------------------------------------------------

    def list_clusters(self, request: Request) -> Response:
        where = validate.filters(request.query)
        sql = f"SELECT {COLUMNS} FROM clusters"
        if where:
            sql += " WHERE " + " AND ".join(f"{column} = ?" for column in where)
        with self.db.transaction() as tx:
            rows = tx.all(sql + " ORDER BY seq, id", list(where.values()))
        return json_response(200, '{"items":[' + ",".join(map(item_json, rows)) + "]}")

    def create_cluster(self, request: Request) -> Response:
        full = validate.new_cluster(request.json())
        cid = full["id"]
        with self.db.transaction() as tx:
            if not insert(tx, full):
                raise conflict(f"cluster {cid} exists already; PATCH it instead")
            row = self._read(tx, cid, lock=False)
        return json_response(201, row.as_json(), etag=row.etag)

    def get_cluster(self, request: Request, cid: str) -> Response:
        with self.db.transaction() as tx:
            row = self._read(tx, cid, lock=False)
        return json_response(200, row.as_json(), etag=row.etag)

    def patch_cluster(self, request: Request, cid: str) -> Response:
        patch = dict(validate.cluster_patch(request.json()))
        has_lease = "lease" in patch
        lease = patch.pop("lease", None)
        status = patch.pop("status", None)

        def change(row: Row) -> None:
            row.doc.update(patch)
            if status is not None:
                row.status = status
            if has_lease:
                self._set_lease(row, lease)

        row = self._modify(request, cid, change)
        return json_response(200, row.as_json(), etag=row.etag)

    def delete_cluster(self, request: Request, cid: str) -> Response:
        with self.db.transaction() as tx:
            self._check(request, self._read(tx, cid, lock=True))
            tx.run("DELETE FROM clusters WHERE id = ?", [cid])
        return NO_CONTENT

    def _set_lease(self, row: Row, lease: Mapping[str, Any] | None) -> None:
        if lease is None:
            row.holder = row.expires = None
            return
        now = self.clock()
        taken_over = row.holder is not None and row.holder == lease.get("take_over")
        if row.lease_held_by_other(lease["holder"], now) and not taken_over:
            until = timestamp(row.expires or now)
            raise conflict(
                f"the lease of {row.id} is held by {row.holder} until {until}",
                type_=LEASE_HELD,
                extra={"holder": row.holder, "expires_at": until},
            )
        row.holder, row.expires = lease["holder"], now + float(lease["ttl_seconds"])

    # --- config items and node pools -----------------------------------------------------------

    def put_item(self, request: Request, cid: str, key: str) -> Response:
        value = validate.item_value(request.json())
        row = self._modify(request, cid, lambda row: row.doc["config_items"].update({key: value}))
        return json_response(200, {"value": value}, etag=row.etag)

    def delete_item(self, request: Request, cid: str, key: str) -> Response:
        self._modify(request, cid, lambda row: _pop(row.doc["config_items"], key, "config item"))
        return NO_CONTENT

    def list_pools(self, request: Request, cid: str) -> Response:
        with self.db.transaction() as tx:
            row = self._read(tx, cid, lock=False)
        return json_response(200, {"items": row.doc["node_pools"]}, etag=row.etag)

    def get_pool(self, request: Request, cid: str, name: str) -> Response:
        with self.db.transaction() as tx:
            row = self._read(tx, cid, lock=False)
        return json_response(200, _pool(row, name), etag=row.etag)

    def put_pool(self, request: Request, cid: str, name: str) -> Response:
        pool = validate.normal_node_pool(validate.node_pool(request.json(), name))
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

        row = self._modify(request, cid, change)
        return json_response(201 if created else 200, _pool(row, name), etag=row.etag)

    def delete_pool(self, request: Request, cid: str, name: str) -> Response:
        def change(row: Row) -> None:
            _pool(row, name)
            row.doc["node_pools"] = [p for p in row.doc["node_pools"] if p["name"] != name]

        self._modify(request, cid, change)
        return NO_CONTENT

    def put_pool_item(self, request: Request, cid: str, name: str, key: str) -> Response:
        value = validate.item_value(request.json())
        row = self._modify(
            request, cid, lambda row: _pool(row, name)["config_items"].update({key: value})
        )
        return json_response(200, {"value": value}, etag=row.etag)

    def delete_pool_item(self, request: Request, cid: str, name: str, key: str) -> Response:
        self._modify(
            request, cid, lambda row: _pop(_pool(row, name)["config_items"], key, "config item")
        )
        return NO_CONTENT

    # --- infrastructure accounts ---------------------------------------------------------------

    def list_accounts(self, request: Request) -> Response:
        with self.db.transaction() as tx:
            docs = [d for (d,) in tx.all("SELECT doc FROM infrastructure_accounts ORDER BY id")]
        return json_response(200, '{"items":[' + ",".join(docs) + "]}")

    def create_account(self, request: Request) -> Response:
        account = validate.account(request.json(), new=True)
        with self.db.transaction() as tx:
            count = tx.run(
                "INSERT INTO infrastructure_accounts (id, doc) VALUES (?, ?)"
                " ON CONFLICT (id) DO NOTHING",
                [account["id"], dumps(account)],
            )
        if count != 1:
            raise conflict(f"infrastructure account {account['id']} exists already")
        return json_response(201, account)

    def get_account(self, request: Request, aid: str) -> Response:
        with self.db.transaction() as tx:
            return json_response(200, self._account(tx, aid, lock=False))

    def patch_account(self, request: Request, aid: str) -> Response:
        patch = validate.account(request.json(), new=False)
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

    def _read(self, tx: Tx, cid: str, *, lock: bool) -> Row:
        found = tx.one(
            f"SELECT {COLUMNS} FROM clusters WHERE id = ?" + (tx.for_update if lock else ""), [cid]
        )
        if found is None:
            raise not_found(f"no cluster {cid} in the registry")
        return Row.from_db(found)

    def _modify(self, request: Request, cid: str, change: Callable[[Row], object]) -> Row:
        """Lock the row, check the request's preconditions, change, normalise and save it."""
        with self.db.transaction() as tx:
            row = self._read(tx, cid, lock=True)
            self._check(request, row)
            change(row)
            row.normalise()
            save(tx, row)
        return row

    def _check(self, request: Request, row: Row) -> None:
        """`If-Match` and `Clmgit-Lease-Holder`, when the request has them."""
        if_match = request.headers.get("if-match")
        if if_match is not None and if_match.strip() not in ("*", row.etag):
            raise Problem(
                412,
                "Precondition Failed",
                f"cluster {row.id} changed since it was read (now ETag {row.etag}); read it again",
            )
        holder = request.headers.get(LEASE_HEADER.lower())
        if holder is not None and row.holder != holder:
            now_held = f"held by {row.holder}" if row.holder else "free"
            raise conflict(
                f"the lease of {row.id} is not {holder}'s any more: it is {now_held}",
                type_=LEASE_LOST,
            )


def _pool(row: Row, name: str) -> dict[str, Any]:
    for pool in row.doc["node_pools"]:
        if pool["name"] == name:
            return pool
    raise not_found(f"cluster {row.id} has no node pool {name}")


def _pop(items: dict[str, Any], key: str, what: str) -> None:
    if items.pop(key, None) is None:
        raise not_found(f"no {what} {key}")
