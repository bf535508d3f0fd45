"""The Cluster Registry server (`clmgit registry serve`): CLM's HTTP API over SQLite or PostgreSQL.

- `models`: the contract (CLM's spec plus leases) as pydantic models; OpenAPI is generated.
- `limits`: every bound a request meets (size, depth, strings, integers, TTL, timeouts).
- `app`: the FastAPI application: tokens, limits before a handler, problem+json errors, the
  OpenAPI document.
- `routes`: one module-level handler per operation, on an `APIRouter`; what they serve comes
  from `app.state` through `Depends`.
- `api`: the handlers, HTTP-free; leases, ETags and `If-Match` are explained there.
- `validate`, `rows`, `db`: normalised records, their stored form, the two databases and
  the schema's migrations.
- `httpd`: `RegistryServer`, uvicorn in this process (a thread, or the foreground).

A throw-away PostgreSQL for tests and benchmarks is `clmgit_sandbox.localpg`.
"""
