"""Subresources and virtual kinds beyond status and eviction: `scale`, pods' `log`, and the
self-reviews of `kubectl auth can-i`.

- `<workload>/scale` reads and writes `spec.replicas` through an autoscaling/v1 `Scale`
  (GET, PUT, and PATCH of any patch type, as the server takes them), with the selector in
  `status.selector`; a Deployment scaled this way gets a ScalingReplicaSet event.
- `pods/<name>/log` is text: what the node simulator's containers say (a start line per container
  on its node), `container=` choosing one of several, `tailLines=` and `timestamps=` honoured. A
  pod not running yet answers 400, as kubelet does for a waiting container.
- SelfSubjectAccessReview and SelfSubjectRulesReview are answered, never stored: the sandbox's
  one token may do everything.
"""

from __future__ import annotations

import copy
from typing import Any

from clmgit_sandbox.kubeapi.errors import bad_request
from clmgit_sandbox.kubeapi.messages import Request
from clmgit_sandbox.kubeapi.selectors import Requirement, from_label_selector_object
from clmgit_sandbox.kubeapi.store import Obj


def scale_of(obj: Obj) -> Obj:
    """The autoscaling/v1 Scale of a workload (a presented object)."""
    meta = obj.get("metadata") or {}
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    requirements = from_label_selector_object(spec.get("selector"))
    selector = ",".join(_selector_text(r) for r in requirements)
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion",
                                          "creationTimestamp") if k in meta},
        "spec": {"replicas": int(spec.get("replicas", 1))},
        "status": {"replicas": int(status.get("replicas") or 0), "selector": selector},
    }


def _selector_text(requirement: Requirement) -> str:
    key, op, values = requirement.key, requirement.operator, requirement.values
    if op == "in" and len(values) == 1:
        return f"{key}={values[0]}"
    if op in ("in", "notin"):
        return f"{key} {op} ({','.join(values)})"
    return key if op == "exists" else f"!{key}" if op == "!" else f"{key}{op}{values[0]}"


def replicas_from(scale: Any) -> int:
    spec = scale.get("spec") if isinstance(scale, dict) else None
    replicas = spec.get("replicas") if isinstance(spec, dict) else None
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise bad_request("a Scale needs spec.replicas, a whole number of at least 0")
    return replicas


def pod_log(pod: Obj, request: Request) -> str:
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    names = [c.get("name", "") for c in spec.get("containers") or []]
    wanted = request.query.get("container")
    name = meta.get("name", "")
    if not wanted:
        if len(names) != 1:
            raise bad_request(f"a container name must be specified for pod {name}, choose one "
                              f"of: [{' '.join(names)}]")
        wanted = names[0]
    if wanted not in names:
        raise bad_request(f"container {wanted} is not valid for pod {name}")
    phase = (pod.get("status") or {}).get("phase")
    if phase != "Running":
        raise bad_request(f'container "{wanted}" in pod "{name}" is waiting to start: '
                          "ContainerCreating")
    container = next(c for c in spec.get("containers") or [] if c.get("name") == wanted)
    started = meta.get("creationTimestamp", "")
    node = spec.get("nodeName", "<none>")
    lines = [
        (started, f"clmgit sandbox: container {wanted} of pod {meta.get('namespace')}/{name} "
                  f"started on node {node}"),
        (started, f"clmgit sandbox: image {container.get('image', '<none>')}"),
    ]
    lines += [(started, f"clmgit sandbox: {c} {' '.join(container.get(c) or [])}")
              for c in ("command", "args") if container.get(c)]
    lines.append((started, "clmgit sandbox: ready (simulated; nothing runs in the sandbox)"))
    tail = request.integer("tailLines")
    if tail is not None and tail >= 0:
        lines = lines[len(lines) - tail:] if tail else []
    stamp = request.flag("timestamps")
    return "".join(f"{when} {text}\n" if stamp else f"{text}\n" for when, text in lines)


def review(kind: str, body: Obj) -> Obj:
    """The answer to a SelfSubjectAccessReview or SelfSubjectRulesReview: everything allowed."""
    answer = copy.deepcopy(body)
    answer.setdefault("metadata", {})
    answer["metadata"].setdefault("creationTimestamp", None)
    if kind == "SelfSubjectAccessReview":
        answer["status"] = {"allowed": True, "reason": "the clmgit sandbox token may do anything"}
    else:
        answer["status"] = {
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": False,
        }
    return answer
