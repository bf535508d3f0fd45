"""Clusters brought to their pins (docs/explanation/reconcile.md): the commands as library calls
(`session`: reconcile, provision, decommission, controller), the plan from registry and pins alone
(`plan`, `pins`), the registry protocol under leases (`run`, `leases`), worker processes
(`workers`), the real backends (`backends`) and health verdicts (`health`). What is done to one
cluster is `clmgit.engine`'s; where records live is `clmgit.registry`'s."""
