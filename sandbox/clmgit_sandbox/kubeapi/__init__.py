"""A Kubernetes API emulator for tests and the local sandbox.

No kube-apiserver can run on the machines clmgit is developed and tested on, so this package
serves the Kubernetes REST API itself, in memory, over HTTPS with a CA of its own (plain HTTP on
the same port too), for the official `kubernetes` client unmodified (typed APIs and
`DynamicClient`) and for the real `kubectl` (1.27 to 1.37 tested), through a kubeconfig that
carries the CA and a bearer token:

    with KubeAPIServer() as server:
        server.write_kubeconfig(path, context_names=["cluster-1", "alias-1"])
        api = kubernetes.config.new_client_from_config(str(path), context="cluster-1")

What it does as the real API server does (details in the module docstrings):
- discovery for the built-in kinds clmgit touches and for custom resources once their CRD exists;
- create, get, list (cluster-wide too, label and field selectors, limit/continue), update with
  resourceVersion conflicts, merge / JSON / strategic merge patch, server-side apply with
  managedFields (re-applying is a no-op, dropped fields go, conflicts are 409 unless forced),
  status subresources, `dryRun=All`;
- delete with preconditions, finalizers and propagation (Orphan, Background, Foreground) through
  owner references; namespaces delete their contents, CRDs their custom resources;
- the Eviction subresource judged by PodDisruptionBudgets (429 / 500);
- for kubectl: OpenAPI v2 (JSON and protobuf) and v3 documents from the Kubernetes schemas the
  `kubernetes-validate` package ships and from CRDs' openAPIV3Schema (`openapi.py`), strict field
  validation (`fieldValidation=Strict/Warn/Ignore`), watch with resourceVersions, bookmarks and
  watch lists (`watch.py`), server-side `Table` output with printer columns (`table.py`), the
  `scale` and `log` subresources and self-subject reviews (`subresources.py`), Events
  (`events.py`), protobuf request bodies (`protobuf.py`);
- `Status` bodies for errors (400, 401, 404, 405, 409, 413, 415, 422, 429, 500).

Decisions where an emulator must differ, because nothing runs here:
- No controllers and no kubelet in the emulator (the node simulator, `clmgit_sandbox.kubelet`,
  plays them beside it in the demo, `make sandbox` and the kubectl battery). A Deployment alone
  makes no pods; a new Pod is `Pending` and its
  `status` on create is ignored, as on a real server. Tests give pods a phase and a Ready
  condition through the status subresource (`patch_namespaced_pod_status`) or with
  `KubeAPIServer.seed()`, which writes objects as kubelet and controllers would, status included
  (see `fixtures.py`). PodDisruptionBudget status is computed on read, as the disruption
  controller would compute it.
- Deletion is immediate: `gracePeriodSeconds` is accepted and not waited for (nothing would
  confirm termination). Finalizers and the garbage collector run synchronously, inside the
  request: a Foreground or Orphan delete answers with the object marked (`deletionTimestamp`,
  finalizer), as the real server does, but by the time the client reads again the cascade is done.
- Not emulated: defaulting beyond a few fields (Pod phase, Namespace finalizers, CRD names and
  status), most validation (see `validation.py`; CRD schemas are used for unknown fields only),
  conversion between versions (all served versions share objects), admission webhooks, RBAC
  (one bearer token may do everything), aggregated discovery, protobuf or CBOR responses (JSON
  is always answered; clients accept it), exec/attach/port-forward, metrics (`kubectl top`).
"""

from __future__ import annotations

from clmgit_sandbox.kubeapi.server import DEFAULT_MAX_BODY_BYTES, KubeAPIServer
from clmgit_sandbox.kubeapi.stats import RequestRecord, Stats

__all__ = ["DEFAULT_MAX_BODY_BYTES", "KubeAPIServer", "RequestRecord", "Stats"]
