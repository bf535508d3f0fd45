"""`clmgit reconcile`: every selected cluster to its pinned version (DESIGN.md §5)."""
