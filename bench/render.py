"""[2/8]: rendering a cluster from `cluster/` at a SHA, and reading that tree from git.

A synthetic config — 250 manifests in 50 components, a 1,000-line `config-defaults.yaml`, 5 stacks
and 4 node-pool profiles, every file templated and every manifest depending on the cluster (so no
cluster can reuse another's output) — is committed to a real repository. Measured:

- the first cluster at a SHA in a fresh process with an empty compile cache: the tree is read,
  every template compiled (and its code written to the cache directory, as it is by default);
- the same with a warm compile cache: an earlier process rendered the same SHA, so the compiled
  code is loaded from the cache directory (the usual case: CLI runs, CI shards and controller
  restarts all keep `cache_dir("templates")`);
- the first cluster at a new SHA in a running process (a controller, a reconcile of several
  SHAs): the tree is read, only the files the commit changed (6 here) are compiled;
- the same in a new process (a CI shard) given the compile-cache directory an earlier one filled;
- each further cluster at the same SHA (another registry record, so everything is re-rendered
  and every manifest parsed and checked);
- reading the tree: the first read of a process (which starts git) and a read at a new SHA by a
  running reader, each against `git clone --local` plus a checkout of the same SHA, side by side.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from clmgit_sandbox.configrepo import ConfigRepoBuilder

from clmgit.adapters.git import GitRepo
from clmgit.config.compiled import use_compile_cache_dir
from clmgit.config.render import render_cluster
from clmgit.config.source import GitConfigSource
from clmgit.config.templates import make_environment
from clmgit.model import Cluster, NodePool

COMPONENTS, FILES_PER_COMPONENT = 50, 5
DEFAULT_LINES = 1_000
CF_STACKS = 4  # plus the main stack: 5 stacks
PROFILES = ("worker-default", "worker-splitaz", "worker-gpu", "master-default")
CLUSTERS = 10
RUNS = 7
PROJECT = Path(__file__).resolve().parents[1]

MANIFEST = """\
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {name}
  namespace: kube-system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: kube-system
  labels:
    application: {name}
    version: "{{{{ cluster.config_items.{name}_version }}}}"
spec:
  replicas: {{{{ cluster.config_items.{name}_replicas | int }}}}
  selector:
    matchLabels:
      application: {name}
  template:
    metadata:
      labels:
        application: {name}
      annotations:
        config/hash: "{{{{ manifest_hash('config.yaml') }}}}"
    spec:
      serviceAccountName: {name}
      {{% if cluster.environment == "production" %}}
      priorityClassName: system-cluster-critical
      {{% endif %}}
      containers:
      - name: {name}
        image: "registry.example.org/{name}:{{{{ cluster.config_items.{name}_version }}}}"
        args:
        - --cluster={{{{ cluster.alias }}}}
        - --region={{{{ cluster.region }}}}
        - --zones={{{{ values.availability_zones | join(",") }}}}
        resources:
          requests:
            cpu: "{{{{ cluster.config_items.{name}_cpu }}}}"
            memory: "{{{{ cluster.config_items.{name}_memory }}}}"
          limits:
            memory: "{{{{ cluster.config_items.{name}_memory | scale_quantity(1.5) }}}}"
"""

CONFIG = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}-config
  namespace: kube-system
data:
  config.yaml: |
    cluster: {{{{ cluster.id }}}}
    account: {{{{ cluster.infrastructure_account | account_id }}}}
    zones: {{{{ values.availability_zones | length }}}}
    {{% for pool in cluster.node_pools %}}
    pool-{{{{ pool.name }}}}: {{{{ pool.min_size }}}}-{{{{ pool.max_size }}}}
    {{% endfor %}}
"""

STACK = """\
AWSTemplateFormatVersion: 2010-09-09
Description: {title} of {{{{ cluster.id }}}}
Resources:
{resources}
Outputs:
  {title}Id:
    Value: !Ref {title}0
"""

RESOURCE = """\
  {title}{i}:
    Type: AWS::EC2::SecurityGroup
    Properties:
      GroupDescription: "{{{{ cluster.local_id }}}} {title} {i}"
      VpcId: "{{{{ values.stack_outputs.VpcId }}}}"
      Tags:
      - Key: kubernetes.io/cluster/{{{{ cluster.id }}}}
        Value: owned
      - Key: item
        Value: "{{{{ cluster.config_items.item_{i:04d} }}}}"
"""

POOL_STACK = """\
AWSTemplateFormatVersion: 2010-09-09
Resources:
  AutoScalingGroup:
    Type: AWS::AutoScaling::AutoScalingGroup
    Properties:
      MinSize: "{{{{ asg_size(node_pool.min_size, 1) }}}}"
      MaxSize: "{{{{ asg_size(node_pool.max_size, 1) }}}}"
      VPCZoneIdentifier: [{{{{ values.subnets["*"] }}}}]
      Tags:
      - Key: profile
        Value: {profile}
      - Key: pool
        Value: "{{{{ node_pool.name }}}}"
      - Key: instance-types
        Value: "{{{{ node_pool.instance_types | join(",") }}}}"
{tags}"""

POOL_TAG = """\
      - Key: item-{i:04d}
        Value: "{{{{ node_pool.config_items.item_{i:04d} }}}}"
"""


def synthetic_config() -> dict[str, str]:
    files: dict[str, str] = {"cluster/config-defaults.yaml": defaults_file()}
    for c in range(COMPONENTS):
        for f in range(FILES_PER_COMPONENT - 1):
            name = f"app{c:02d}x{f}"
            files[f"cluster/manifests/comp{c:02d}/{f}-{name}.yaml"] = MANIFEST.format(name=name)
        files[f"cluster/manifests/comp{c:02d}/config.yaml"] = CONFIG.format(name=f"comp{c:02d}")
    for i, title in enumerate(["Main", *(f"Extra{n}" for n in range(CF_STACKS))]):
        resources = "".join(RESOURCE.format(title=title, i=r) for r in range(15))
        path = "cluster/stack.yaml" if i == 0 else f"cluster/cf-manifests/{i:02d}-{title}.yaml"
        files[path] = STACK.format(title=title, resources=resources)
    for profile in PROFILES:
        tags = "".join(POOL_TAG.format(i=i) for i in range(20))
        files[f"cluster/node-pools/{profile}/stack.yaml"] = POOL_STACK.format(profile=profile,
                                                                              tags=tags)
    return files


def defaults_file() -> str:
    lines = ['{% if cluster.environment == "production" %}', 'tier: "critical"', "{% else %}",
             'tier: "standard"', "{% endif %}"]
    for c in range(COMPONENTS):
        for f in range(FILES_PER_COMPONENT - 1):
            name = f"app{c:02d}x{f}"
            lines += [f'{name}_version: "v1.{c}.{f}"', f"{name}_replicas: 2",
                      f"{name}_cpu: 100m", f"{name}_memory: {64 * (f + 1)}Mi"]
    i = 0
    while len(lines) < DEFAULT_LINES:
        lines.append(f'item_{i:04d}: "value-{i}-{{{{ cluster.region }}}}"')
        i += 1
    return "\n".join(lines) + "\n"


def make_cluster(i: int) -> Cluster:
    pools = tuple(NodePool(name=f"pool-{p}", profile=profile, instance_types=("m5.large",),
                           min_size=1 + i % 3, max_size=10, config_items={"item_0001": f"pool{p}"})
                  for p, profile in enumerate(PROFILES))
    return Cluster(
        id=f"aws:123456789012:eu-central-1:kube-{i}", alias=f"kube-{i}",
        infrastructure_account="aws:123456789012", region="eu-central-1", local_id=f"kube-{i}",
        api_server_url=f"https://kube-{i}.example.org", channel="dev",
        environment="production" if i % 2 else "test",
        config_items={"app00x0_replicas": str(3 + i), "item_0002": f"cluster-{i}"},
        node_pools=pools,
    )


def commit(b: ConfigRepoBuilder, files: dict[str, str], *, parent: str | None = None) -> str:
    """One commit on dev with `files`, through `git fast-import` (one process, not one per file)."""
    parts = [b"commit refs/heads/dev\ncommitter Bench <b@x> 1700000000 +0000\ndata 6\nconfig\n",
             f"from {parent or b.root}\n".encode()]
    for path, text in files.items():
        data = text.encode()
        parts.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
    subprocess.run(["git", "fast-import", "--quiet", "--force"], cwd=b.path,
                   input=b"".join(parts), check=True)
    return b.sha("dev")


def change(files: dict[str, str], run_no: int) -> dict[str, str]:
    """What a typical promotion changes: a few manifests and the defaults."""
    paths = [p for p in files if p.startswith("cluster/manifests/")][run_no::50][:5]
    changed = {p: files[p] + f"# change {run_no}\n" for p in paths}
    defaults = "cluster/config-defaults.yaml"
    changed[defaults] = files[defaults] + f'change_{run_no}: "{run_no}"\n'
    return changed


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def clocked(action: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU) seconds of `action`. On a shared machine the wall time includes waiting for a
    core; the CPU time of this process is the steadier figure, reported beside it."""
    start, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - start, time.process_time() - cpu


def wall(samples: list[tuple[float, float]]) -> float:
    return statistics.median(w for w, _ in samples)


def cpu_note(samples: list[tuple[float, float]]) -> str:
    return f"CPU {statistics.median(c for _, c in samples) * 1000:.0f} ms"


def cold_first(repo: Path, sha: str, cache_dir: Path) -> tuple[float, float]:
    """The first cluster rendered in a fresh process; only the render is timed."""
    code = ("import sys; from bench.render import cold_child; "
            "print(cold_child(sys.argv[1], sys.argv[2], sys.argv[3]))")
    out = subprocess.run([sys.executable, "-c", code, str(repo), sha, str(cache_dir)],
                         cwd=PROJECT, check=True, capture_output=True, text=True).stdout
    wall, cpu = out.split()
    return float(wall), float(cpu)


def cold_child(repo: str, sha: str, cache_dir: str) -> str:
    use_compile_cache_dir(cache_dir)
    source = GitConfigSource(GitRepo(repo))
    wall, cpu = clocked(lambda: render_cluster(source, sha, make_cluster(0)))
    return f"{wall} {cpu}"


#: What a process that renders imports: the renderer, the git reader, the compile cache.
RENDER_IMPORTS = "clmgit.config.render, clmgit.config.source, clmgit.adapters.git"


def started(imports: str) -> tuple[float, float]:
    """(wall, CPU) seconds of a fresh Python process that imports `imports` ("" for none) and
    ends: what a command pays before it renders anything."""
    code = f"import {imports}" if imports else "pass"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=PROJECT, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def clone_and_checkout(repo: Path, sha: str, target: Path) -> None:
    subprocess.run(["git", "clone", "--quiet", "--local", "--no-checkout", str(repo), str(target)],
                   check=True, capture_output=True)
    subprocess.run(["git", "-C", str(target), "checkout", "--quiet", sha], check=True,
                   capture_output=True)


def jinja_compile(files: dict[str, str]) -> None:
    """What Jinja alone spends compiling every template: source to Python code, nothing cached."""
    env = make_environment()
    for path, text in files.items():
        env.compile(text, path, path)


def first_read(repo: GitRepo, sha: str) -> None:
    """A read by a new source, whose git process starts for it (a CLI run reads this way)."""
    source = GitConfigSource(repo)
    source.files(sha)
    source.close()


def run() -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory(prefix="clmgit-bench-render-") as tmp:
        use_compile_cache_dir(Path(tmp) / "this-process")  # not the user's cache
        b = ConfigRepoBuilder(Path(tmp) / "config")
        files = synthetic_config()
        sha = commit(b, files)
        repo = GitRepo(b.path)
        clusters = [make_cluster(i) for i in range(CLUSTERS)]
        cold = [cold_first(b.path, sha, Path(tmp) / f"empty-{n}") for n in range(RUNS)]
        jinja = [clocked(partial(jinja_compile, files)) for _ in range(RUNS)]
        cache_dir = Path(tmp) / "compiled"
        cold_first(b.path, sha, cache_dir)  # an earlier process, at the same SHA
        warm = [cold_first(b.path, sha, cache_dir) for _ in range(RUNS)]
        source = GitConfigSource(repo)
        render_cluster(source, sha, clusters[0])
        further = [clocked(partial(render_cluster, source, sha, c))
                   for _ in range(RUNS) for c in clusters[1:]]
        running = GitConfigSource(repo)  # a reconcile or controller: its reader is running
        running.files(sha)
        new_sha, new_process, next_sha = [], [], sha
        next_reads, next_clones = [], []
        for run_no in range(RUNS):
            next_sha = commit(b, change(files, run_no), parent=next_sha)
            next_reads.append(timed(partial(running.files, next_sha)))
            next_clones.append(timed(partial(clone_and_checkout, b.path, next_sha,
                                             Path(tmp) / f"next-clone-{run_no}")))
            new_process.append(cold_first(b.path, next_sha, cache_dir))
            new_sha.append(clocked(partial(render_cluster, GitConfigSource(repo), next_sha,
                                           clusters[0])))
        imports = [started(RENDER_IMPORTS) for _ in range(RUNS)]
        bare = [started("") for _ in range(RUNS)]
        boto = [started("boto3") for _ in range(RUNS)]
        reads, clones = [], []
        for run_no in range(RUNS):
            reads.append(timed(partial(first_read, repo, sha)))
            clones.append(timed(partial(clone_and_checkout, b.path, sha,
                                        Path(tmp) / f"clone-{run_no}")))
    manifests = sum(1 for p in files if p.startswith("cluster/manifests/"))
    detail = (f"{manifests} manifests ({manifests - COMPONENTS} with 2 objects) in {COMPONENTS} "
              f"components, {DEFAULT_LINES}-line defaults, {1 + CF_STACKS} stacks, "
              f"{len(PROFILES)} node-pool profiles")
    read, clone = statistics.median(reads), statistics.median(clones)
    next_read, next_clone = statistics.median(next_reads), statistics.median(next_clones)
    return [
        {"benchmark": "render: first cluster at a SHA, fresh process, empty compile cache",
         "target": "<= 400 ms", "median_s": wall(cold),
         "detail": f"{detail}; tree read + compile of all {len(files)} templates (a forked "
                   f"helper per further core compiles from the end while the renderer goes on, "
                   f"code written to the cache) + render; median of {RUNS} fresh processes; "
                   f"{cpu_note(cold)} in the rendering process"},
        {"benchmark": "of which Jinja2 alone compiles the 260 templates", "target": "-",
         "median_s": wall(jinja),
         "detail": "`Environment.compile` of every template, nothing cached, no clmgit code: "
                   f"the row above cannot go below this divided by the cores (plus the render); "
                   f"median of {RUNS}; "
                   f"{cpu_note(jinja)}"},
        {"benchmark": "of which Python start and the render path's imports", "target": "-",
         "median_s": wall(imports),
         "detail": "a fresh process importing the renderer, the git reader and the compile "
                   "cache, before it renders (not in the row above, which times the render): "
                   f"{cpu_note(imports)}; of it Python's own start {wall(bare) * 1000:.0f} ms "
                   f"({cpu_note(bare)}); a fresh process that imports boto3 alone (the render path "
                   f"still imports it): {wall(boto) * 1000:.0f} ms, {cpu_note(boto)}; "
                   f"median of {RUNS}"},
        {"benchmark": "render: first cluster at a SHA, fresh process, warm compile cache",
         "target": "<= 400 ms", "median_s": wall(warm),
         "detail": "tree read + compiled code of every template loaded from the cache directory "
                   f"an earlier process filled at this SHA + render; median of {RUNS} processes; "
                   f"{cpu_note(warm)}"},
        {"benchmark": "render: first cluster at a new SHA, running process", "target": "<= 400 ms",
         "median_s": wall(new_sha),
         "detail": f"tree read + compile of the 6 changed files + render; median of {RUNS} SHAs; "
                   f"{cpu_note(new_sha)}"},
        {"benchmark": "render: first cluster at a new SHA, new process with a compile-cache dir",
         "target": "<= 400 ms", "median_s": wall(new_process),
         "detail": "as above, compiled code of unchanged files loaded from the directory an "
                   f"earlier process filled; median of {RUNS} SHAs; {cpu_note(new_process)}"},
        {"benchmark": "render: each further cluster at the SHA", "target": "<= 60 ms",
         "median_s": wall(further),
         "detail": "every template rendered, every object parsed and checked (the rendered "
                   "defaults, the same text for clusters alike in environment and region, are "
                   f"parsed once per text); median of {len(further)} renders; {cpu_note(further)}"},
        {"benchmark": "read cluster/ at a SHA, first read of a process",
         "target": ">= 5x faster than clone --local + checkout", "median_s": read,
         "detail": f"{len(files)} files; starts git cat-file; clone --local + checkout: "
                   f"{clone * 1000:.0f} ms, {clone / read:.1f}x slower; median of {RUNS}, "
                   "side by side"},
        {"benchmark": "read cluster/ at a new SHA, running process",
         "target": ">= 5x faster than clone --local + checkout", "median_s": next_read,
         "detail": f"the commit after a promotion (6 files changed), read once by the running "
                   f"reader; clone --local + checkout of it: {next_clone * 1000:.0f} ms, "
                   f"{next_clone / next_read:.1f}x slower; median of {RUNS} SHAs, side by side"},
    ]


if __name__ == "__main__":
    for row in run():
        print(f"{row['benchmark']}: {float(str(row['median_s'])) * 1000:.1f} ms ({row['target']}) "
              f"- {row['detail']}")
