"""Test helper: kubernetes-on-aws (../shared/corpus) at a branch, converted to Jinja by
`clmgit.convert`, rendered with the data CLM's templates see (`.Cluster`, `.NodePool`, `.Values`) as
the project computes it (`clmgit.config.computed`) on an in-memory account."""

from __future__ import annotations

import hashlib
import posixpath
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
from clmgit_sandbox.clmaccount import MemoryClmAccount, certificate
from clmgit_sandbox.corpus import corpus_bundle

from clmgit.accounts import Vpc
from clmgit.config.clmfuncs import clm_functions
from clmgit.config.computed import defaults_data
from clmgit.config.defaults import parse_defaults
from clmgit.config.templates import make_environment
from clmgit.convert.clmdata import SAMPLE_POOLS as POOLS
from clmgit.convert.clmdata import registry_items
from clmgit.convert.migrate import read_source
from clmgit.convert.tree import convert_tree
from clmgit.model import Cluster
from tests.helpers.configrepo import cluster
from tests.helpers.data import corpus_or_skip

BUNDLE = corpus_bundle()
VPC_ID = "vpc-0123456789abcdef0"
#: What the registry sets for a cluster (vpc_id and subnets are discovered: `computed`).
REGISTRY_ITEMS = registry_items()
# The main stack's outputs, as the engine passes them on.
OUTPUTS = {"stack_outputs": {"EtcdEncryptionKey": "0123-4567",
                             "MasterFilesEncryptionKey": "arn:aws:kms:eu-central-1:1:key/m",
                             "WorkerFilesEncryptionKey": "arn:aws:kms:eu-central-1:1:key/w"}}


def corpus_files(tmp: Path, branch: str = "dev") -> dict[str, str]:
    """`cluster/` of the corpus at `branch`: path → text. Skips when the corpus is absent."""
    corpus_or_skip()
    repo = tmp / "koa.git"
    if not repo.exists():
        subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(repo)], check=True)
    files = read_source(str(repo), branch).files  # as `clmgit convert` reads it: links resolved
    return {path: data.decode() for path, data in files.items()}


class CorpusRenderer:
    """The corpus's templates, converted once, rendered in clmgit's Jinja environment."""

    def __init__(self, files: dict[str, str], ec2: Any, *,
                 converted: dict[str, str] | None = None) -> None:
        """`converted` (path → Jinja text) skips the conversion; templates are then loaded by
        name, through clmgit's compile cache, as a converted repository's would be."""
        self.files = files
        self.ec2 = ec2
        self.errors: dict[str, str] = {}  # path → why it could not be converted or compiled
        if converted is None:
            conversion = convert_tree({p: t.encode() for p, t in files.items()
                                       if p.endswith(".yaml")})
            converted = conversion.files
            self.errors = {refused.partition(":")[0]: refused for refused in conversion.refused}
        self.converted = converted
        self.env = make_environment(jinja2.DictLoader(converted))
        self.env.globals.update(clm_functions(ec2=ec2))
        self.templates: dict[str, Any] = {}
        for path in converted:
            try:
                self.templates[path] = self.env.get_template(path)
            except Exception as e:  # noqa: BLE001 - reported per file by the tests
                self.errors[path] = f"{type(e).__name__}: {e}"

    def render(self, path: str, root: Mapping[str, Any]) -> str:
        """`path` rendered; `manifestHash` renders a sibling with the same data, as CLM's. The
        globals are shared with the context, not copied per file (as `TemplateSet` does)."""
        done: dict[str, str] = {}

        def manifest_hash(name: str) -> str:
            sibling = posixpath.normpath(posixpath.join(posixpath.dirname(path), name))
            if sibling not in done:
                done[sibling] = self._run(sibling, variables)
            return hashlib.sha256(done[sibling].encode()).hexdigest()

        variables = {**self.env.globals, **root, "manifestHash": manifest_hash}
        return self._run(path, variables)

    def _run(self, path: str, variables: dict[str, Any]) -> str:
        template = self.templates[path]
        context = template.new_context(variables, shared=True)
        try:
            return str(self.env.concat(template.root_render_func(context)))
        except Exception:
            self.env.handle_exception()
            raise

    def defaults(self, cluster: Cluster) -> dict[str, str]:
        text = self.render("cluster/config-defaults.yaml", defaults_data(cluster))
        return parse_defaults(text, "cluster/config-defaults.yaml")


class CorpusEc2(MemoryClmAccount):
    """The account of the corpus's sample clusters, in memory, so that rendering every file of
    three clusters asks no server (tests/reconcile/test_corpus_reconcile.py asks moto): `amiID`
    gives a stable made-up id; instance types as EC2 describes them; the registry's VPC with a
    subnet per zone; the etcd KMS key; a certificate for the API server."""

    def __init__(self) -> None:
        super().__init__(
            vpcs=(Vpc(VPC_ID, "172.31.0.0/16"),), default_vpc_id=VPC_ID,
            keys={"alias/etcd-cluster": "arn:aws:kms:eu-central-1:123456789012:key/etcd"},
            certificate_list=(certificate(
                "arn:aws:acm:eu-central-1:123456789012:certificate/x", "*.example.org"),))


def sample(environment: str, items: dict[str, str] | None = None) -> Cluster:
    return cluster(environment=environment, config_items=items or {}, node_pools=POOLS)
