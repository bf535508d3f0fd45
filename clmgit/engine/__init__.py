"""The engine: what reconcile does to a cluster: stacks, node pools, rolling update, manifests."""
