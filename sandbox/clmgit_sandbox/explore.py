"""`make sandbox`: a fleet left running, to explore with kubectl, the AWS CLI and clmgit.

Starts moto and, in this one process, a Kubernetes API emulator (HTTPS, its own CA) with a node
simulator per cluster; the config repo is the demo's (three clusters) or, with `--repo` (and
`--registry`), a copy of yours with every cluster of its registry. Runs `clmgit reconcile` once
so the clusters exist (stacks, nodes, manifests); then prints the lines to paste into another
shell and waits. Ctrl-C, SIGTERM or SIGHUP stops everything and removes the throw-away
directory, at any moment. Your repository and registry are only read: the sandbox works on
copies.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from clmgit.adapters.git import run_git
from clmgit.errors import ClmgitError
from clmgit.model import DECOMMISSIONED, Cluster, parse_cluster
from clmgit.registry.file import FileRegistry
from clmgit_sandbox.aws import aws_environment, moto_server
from clmgit_sandbox.configrepo import example_records, init_example_repo
from clmgit_sandbox.demo import stop_like_ctrl_c
from clmgit_sandbox.fleet import LocalFleet
from clmgit_sandbox.github import GitHubStandIn, write_token
from clmgit_sandbox.github import paste_lines as github_lines
from clmgit_sandbox.kubectl import DEFAULT_MINORS, cached


def _kubectl_hint() -> str:
    """Where a kubectl is: on PATH, or one this project fetched from PyPI; else how to get one."""
    on_path = shutil.which("kubectl")
    if on_path:
        return f"# kubectl: {on_path}"
    for minor in reversed(DEFAULT_MINORS):
        found = cached(minor)
        if found is not None:
            return f"export PATH={shlex.quote(str(found.parent))}:$PATH   # kubectl 1.{minor}"
    return (f"# no kubectl found: `{shlex.quote(sys.executable)} -m clmgit_sandbox.kubectl` "
            "fetches one from PyPI")


def paste_lines(*, kubeconfig: Path, endpoint: str, cache: Path, repo: Path,
                settings: dict[str, str] | None = None) -> list[str]:
    """The shell lines that point kubectl, the AWS CLI and clmgit at the sandbox."""
    aws = " ".join(f"{k}={shlex.quote(v)}" for k, v in aws_environment(endpoint).items())
    bin_dir = Path(sys.executable).parent
    return [
        *(f"export {k}={shlex.quote(v)}" for k, v in (settings or {}).items()),
        f"export KUBECONFIG={shlex.quote(str(kubeconfig))}",
        f"export CLMGIT_KUBECONFIG={shlex.quote(str(kubeconfig))}",
        f"export {aws}",
        f"export CLMGIT_CACHE_DIR={shlex.quote(str(cache))}",
        f"export PATH={shlex.quote(str(bin_dir))}:$PATH",
        _kubectl_hint(),
        f"cd {shlex.quote(str(repo))}",
    ]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m clmgit_sandbox.explore",
        description="Start moto, a Kubernetes API emulator per cluster (one process) and a "
        "config repo; reconcile once; print the lines that point kubectl, the AWS CLI and "
        "clmgit at it; run until Ctrl-C, then remove everything. Without --repo: the demo's "
        "example repo and its three clusters.")
    parser.add_argument("--repo", metavar="PATH_OR_URL",
                        help="your config repo (a path or git URL); the sandbox works on a "
                        "clone of it with every branch, never on the repo itself")
    parser.add_argument("--registry", metavar="CLUSTERS_YAML",
                        help="its file registry (default: clusters.yaml of the repo's control "
                        "branch); copied, so the sandbox's state never reaches yours")
    parser.add_argument("--control-branch", default="main",
                        help="the branch that holds channels/ (default: main)")
    return parser


@dataclass(frozen=True)
class Prepared:
    repo: Path
    registry: Path | None  # None: the repo's own clusters.yaml, the clmgit default
    clusters: list[Cluster]


def prepare(tmp: Path, *, repo: str | None, registry: str | None,
            control_branch: str) -> Prepared:
    """The sandbox's config repo and clusters: the example's, or a copy of the user's repo
    (every branch a local branch, the control branch checked out) and registry."""
    if repo is None:
        if registry is not None:
            raise ClmgitError("--registry needs --repo (the example repo has its own)")
        builder = init_example_repo(tmp / "config")
        _own_origin(tmp, builder.path)
        return Prepared(builder.path, None,
                        [parse_cluster(r, "sandbox") for r in example_records()])
    clone = tmp / "config"
    source = str(Path(repo).resolve()) if Path(repo).exists() else repo
    for args, cwd in ((["clone", "--quiet", "--no-hardlinks", "--", source, str(clone)], tmp),
                      (["fetch", "--quiet", "--update-head-ok", "origin",
                        "+refs/heads/*:refs/heads/*"], clone),
                      (["checkout", "--quiet", control_branch], clone)):
        run_git(args, cwd=cwd)
    copied: Path | None = None
    if registry is not None:
        given = Path(registry).resolve()
        if not given.is_file():
            raise ClmgitError(f"--registry {registry}: no such file")
        inside = Path(source).resolve() if Path(repo).exists() else None
        if inside is not None and given.is_relative_to(inside):
            copied = clone / given.relative_to(inside)  # the clone's own copy of it
        else:
            copied = tmp / "registry" / given.name
            copied.parent.mkdir()
            shutil.copyfile(given, copied)
    path = copied or clone / "clusters.yaml"
    _own_origin(tmp, clone)
    if not path.is_file():
        raise ClmgitError(f"{repo} has no clusters.yaml on {control_branch!r}: "
                          "give its registry with --registry")
    clusters = [c for c in FileRegistry(path).clusters()
                if c.lifecycle_status != DECOMMISSIONED]
    if not clusters:
        raise ClmgitError(f"the registry {path.name} has no cluster to start")
    return Prepared(clone, copied, clusters)


#: The name the sandbox's GitHub stand-in serves the config repo under.
REPOSITORY = "sandbox/config"


def _own_origin(tmp: Path, repo: Path) -> None:
    """A bare copy of the repo in the sandbox as its `origin`: `--push` and `--pr` go there
    (and to the GitHub stand-in over it), never to the repository the sandbox was made from."""
    run_git(["clone", "--quiet", "--bare", "--", str(repo), str(tmp / "origin.git")], cwd=tmp)
    run_git(["remote", "remove", "origin"], cwd=repo, ok=(0, 2))
    run_git(["remote", "add", "origin", str(tmp / "origin.git")], cwd=repo)
    run_git(["fetch", "--quiet", "origin"], cwd=repo)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)  # --help ends here, before anything starts
    stop_like_ctrl_c()  # at any moment, the first reconcile included
    tmp = Path(tempfile.mkdtemp(prefix="clmgit-sandbox-"))
    try:
        prepared = prepare(tmp, repo=args.repo, registry=args.registry,
                           control_branch=args.control_branch)
        with moto_server() as endpoint:
            cache = tmp / "cache"
            os.environ["CLMGIT_CACHE_DIR"] = str(cache)
            settings = {"CLMGIT_CONTROL_BRANCH": args.control_branch}
            if prepared.registry is not None:
                settings["CLMGIT_REGISTRY"] = str(prepared.registry)
            clusters = prepared.clusters
            github = GitHubStandIn(token=write_token(tmp / "github-token"),
                                   repos={REPOSITORY: tmp / "origin.git"})
            with LocalFleet(clusters, tmp / "kubeconfig") as fleet, github:
                print(f"Creating {len(clusters)} clusters (clmgit reconcile)...", flush=True)
                done = subprocess.run(
                    [sys.executable, "-m", "clmgit", "--repo", str(prepared.repo), "reconcile",
                     "--summary", "--kubeconfig", str(fleet.kubeconfig)],
                    stdout=subprocess.DEVNULL, env={**os.environ, **settings},
                )
                if done.returncode != 0:
                    print("sandbox: the first reconcile failed; stopping", file=sys.stderr)
                    return 1
                names = ", ".join(c.alias or c.local_id for c in clusters)
                print(f"\nThe sandbox is running: moto at {endpoint}, a Kubernetes API "
                      f"emulator per cluster in this process ({names}; kubeconfig contexts "
                      "by alias).\nPaste these lines into another shell:\n")
                for line in [*paste_lines(kubeconfig=fleet.kubeconfig, endpoint=endpoint,
                                          cache=cache, repo=prepared.repo, settings=settings),
                             *github_lines(github, REPOSITORY, tmp / "github-token")]:
                    print(f"  {line}")
                print("\nThen try: kubectl get nodes; kubectl get deploy -A; "
                      f"kubectl --context {clusters[-1].alias or clusters[-1].local_id} get "
                      "events -A; clmgit status; clmgit reconcile; clmgit promote dev alpha "
                      "--pr (to the GitHub stand-in)\n"
                      "Ctrl-C here stops the sandbox and removes its files.", flush=True)
                threading.Event().wait()  # until a signal raises KeyboardInterrupt
    except ClmgitError as e:
        print(f"sandbox: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass  # the `with`s above have stopped the fleet and moto
    finally:
        _remove(tmp)
    print("Stopped; moto, the emulators and the repo are gone.")
    return 0


def _remove(tmp: Path, *, within: float = 10.0) -> None:
    """Remove the sandbox's directory, again while something still writes into it: a reconcile
    child killed by the signal leaves its worker processes to notice their parent is gone, and
    one may write a cache file after a first pass (which then leaves the directory behind)."""
    deadline = time.monotonic() + within
    shutil.rmtree(tmp, ignore_errors=True)
    while tmp.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
