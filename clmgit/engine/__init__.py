"""What reconcile does to one cluster (docs/explanation/design.md: the engine), in order
(`cluster.Engine`): stacks (`stacks`, `clmstacks`), node pools and rolling updates with drains
(`nodepools`, `rolling`, `drain`), manifests and deletions (`manifests`, `takeover`, `karpenter`),
one look at health (`health`, `rollout`, `probes`). It declares its seams (`StackBackend`,
`NodePoolBackend`, `KubeClient`, `Clock`), which the adapters implement, and asks the lease before
each call (`guard`); which clusters, when and under which lease is `clmgit.reconcile`'s."""
