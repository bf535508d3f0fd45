"""`clmgit registry serve`: CLM's Cluster Registry API, with leases, over SQLite or PostgreSQL.
`models` is the contract (pydantic; OpenAPI generated), `limits` every bound, `app` the FastAPI
application (tokens, limits, problem answers, the OpenAPI document), `routes` one module-level
handler per operation, `problems` the error answers, `api` the handlers without HTTP (leases,
ETags, `If-Match`), `validate`, `rows` and `db` records, rows, databases and migrations, `httpd`
uvicorn in this process. The client is `clmgit.registry.http`; a PostgreSQL for tests is
`clmgit_sandbox.localpg`.
"""
