"""clmgit-sandbox, the local world clmgit is tested and shown in (its own distribution; clmgit never
imports it): moto with clmgit's patches (`aws`, `moto_shims`), the Kubernetes API emulator
(`kubeapi`) and node simulator (`kubelet`), a GitHub stand-in (`github`), config repos and fleets
(`configrepo`, `configtree`, `fleet`), doubles of clmgit's seams (`doubles`, `clmaccount`,
`memorycloud`), PostgreSQL and Chromium (`localpg`, `browser`), `make demo` and `make sandbox`."""
