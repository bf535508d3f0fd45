"""The Cluster Registry server (`clmgit registry serve`): CLM's HTTP API over SQLite or PostgreSQL.

- `api`: routes and handlers, HTTP-free; leases, ETags and `If-Match` are explained there.
- `validate`: strict checking of bodies and queries (400 with one sentence).
- `rows`, `db`: the stored form of a cluster and the two databases.
- `httpd`: the stdlib HTTP server, bearer-token auth, problem+json answers.
- `localpg`: a throw-away PostgreSQL server for tests and benchmarks.

Start one with `clmgit.registry.server.httpd.RegistryServer`.
"""
