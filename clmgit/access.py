"""How a run reaches a cluster, as plain values: the AWS account it must act in, the role that
gets it there (`Roles`), and the way to the cluster's API server (`Access.kube_mode`).

A registry record names its account (`infrastructure_account: aws:<12 digits>`); CLM's ids
(`aws:<account>:<region>:<name>`) name it again with the region. The ambient credentials are the
base: for an account with a role configured (`aws.role` in `clmgit.yaml`, a template with
`{account}`, or `CLMGIT_AWS_ROLES`, an explicit JSON mapping that wins over it) the run assumes
that role; otherwise it acts with the base credentials, and only in their own account
(`clmgit.adapters.aws.identity` asks STS which that is). The STS calls are the adapter's; what
is configured, and how a record is read, is here.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from clmgit.errors import ConfigError
from clmgit.model import Cluster

ROLES_ENV = "CLMGIT_AWS_ROLES"
ACCOUNT_RE = re.compile(r"^[0-9]{12}$")
_ROLE_ARN_RE = re.compile(r"^arn:aws[a-z-]*:iam::([0-9]{12}):role/[\w+=,.@/-]+$")
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: CLM's cluster ids: `aws:<account>:<region>:<local id>`.
_CLM_ID_RE = re.compile(r"^aws:([0-9]{12}):([a-z0-9-]+):")

#: The ways to a cluster's API server (`--kube-auth`).
AUTO, KUBECONFIG, EKS, TOKEN = "auto", "kubeconfig", "eks", "token"
KUBE_AUTH_MODES = (AUTO, KUBECONFIG, EKS, TOKEN)
#: The provider whose clusters are EKS clusters, reached with a token from STS.
EKS_PROVIDER = "zalando-eks"


@dataclass(frozen=True)
class Roles:
    """The role to assume per account: explicit ones first, then the template."""

    template: str = ""
    #: The name of the environment variable that holds the external id (never the id itself).
    external_id_from: str = ""
    explicit: Mapping[str, str] = field(default_factory=dict)

    def role_for(self, account: str) -> str | None:
        if account in self.explicit:
            return self.explicit[account]
        return self.template.replace("{account}", account) if self.template else None

    def external_id(self, env: Mapping[str, str] = os.environ) -> str | None:
        if not self.external_id_from:
            return None
        value = env.get(self.external_id_from, "")
        if not value:
            raise ConfigError(f"aws.external_id_from in clmgit.yaml names ${self.external_id_from}"
                              ", which is not set: set it to the external id of the roles")
        return value


NO_ROLES = Roles()


def parse_roles(settings: Mapping[str, Any], where: str,
                env: Mapping[str, str] = os.environ) -> Roles:
    """The `aws:` key of the settings and `CLMGIT_AWS_ROLES`; one sentence on what is wrong."""
    raw = settings.get("aws") or {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: key 'aws' must be a mapping such as "
                          "{role: 'arn:aws:iam::{account}:role/clmgit'}")
    unknown = sorted(str(k) for k in raw if k not in ("role", "external_id_from"))
    if unknown:
        raise ConfigError(f"{where}: aws has unknown key {unknown[0]!r} "
                          "(known keys: role, external_id_from)")
    template = raw.get("role", "")
    if template and (not isinstance(template, str)
                     or not _ROLE_ARN_RE.match(template.replace("{account}", "0" * 12))):
        raise ConfigError(f"{where}: aws.role must be a role ARN such as "
                          f"arn:aws:iam::{{account}}:role/clmgit, not {template!r}")
    external = raw.get("external_id_from", "")
    if external and (not isinstance(external, str) or not _ENV_NAME_RE.match(external)):
        raise ConfigError(f"{where}: aws.external_id_from must name an environment variable, "
                          f"not {external!r}")
    return Roles(template or "", external or "", _explicit_roles(env.get(ROLES_ENV, "")))


def _explicit_roles(text: str) -> dict[str, str]:
    if not text.strip():
        return {}
    try:
        raw = json.loads(text)
    except ValueError:
        raw = None
    if not isinstance(raw, dict):
        raise ConfigError(f"{ROLES_ENV} must be a JSON object of account id to role ARN, such "
                          'as {"123456789012": "arn:aws:iam::123456789012:role/clmgit"}')
    for account, arn in raw.items():
        match = _ROLE_ARN_RE.match(arn) if isinstance(arn, str) else None
        if not ACCOUNT_RE.match(account) or match is None or match.group(1) != account:
            raise ConfigError(f"{ROLES_ENV}: {account!r} must map a 12-digit account id to a "
                              "role ARN in that same account")
    return dict(raw)


def account_of(cluster: Cluster) -> str | None:
    """The account a record says its cluster is in (None: the record does not say)."""
    value = cluster.infrastructure_account
    if not value:
        return None
    provider, _, account = value.partition(":")
    if provider != "aws" or not ACCOUNT_RE.match(account):
        raise ConfigError(f"cluster {_name(cluster)}: infrastructure_account {value!r} is not "
                          "of the form aws:<12-digit account id>; correct the registry")
    return account


def check_record(cluster: Cluster) -> str | None:
    """The cluster's account, after checking that a CLM id agrees with the record's
    `infrastructure_account` and `region` (a record copied from another cluster often does
    not)."""
    account = account_of(cluster)
    match = _CLM_ID_RE.match(cluster.id)
    if match is None:
        return account
    in_id, region = match.groups()
    if account is not None and in_id != account:
        raise ConfigError(f"cluster {_name(cluster)}: its id names account {in_id} but its "
                          f"infrastructure_account is aws:{account}; correct the registry")
    if region != cluster.region:
        raise ConfigError(f"cluster {_name(cluster)}: its id names region {region} but its "
                          f"region is {cluster.region or 'empty'}; correct the registry")
    return account


def _name(cluster: Cluster) -> str:
    return cluster.alias or cluster.id


@dataclass(frozen=True)
class Access:
    """What a run reaches clusters with: the Kubernetes credentials and the AWS roles."""

    token: str | None = None
    kubeconfig: str | None = None
    kube_auth: str = AUTO
    roles: Roles = NO_ROLES

    def kube_mode(self, cluster: Cluster) -> str:
        """`kubeconfig`, `token` or `eks` for this cluster; `auto` takes the kubeconfig if one
        is given, else the token, else STS for an EKS cluster."""
        mode = self.kube_auth
        if mode == AUTO:
            mode = (KUBECONFIG if self.kubeconfig else TOKEN if self.token
                    else EKS if cluster.provider == EKS_PROVIDER else "")
        if mode == KUBECONFIG and not self.kubeconfig:
            raise ConfigError("--kube-auth kubeconfig needs --kubeconfig (CLMGIT_KUBECONFIG)")
        if mode == TOKEN and not self.token:
            raise ConfigError("--kube-auth token needs --token-file (CLMGIT_TOKEN_FILE) or "
                              "--token (CLMGIT_TOKEN)")
        if not mode:
            raise ConfigError(f"no way to reach the API server of {_name(cluster)}: give --token "
                              "(CLMGIT_TOKEN) or --kubeconfig (CLMGIT_KUBECONFIG), or "
                              f"--kube-auth eks for an EKS cluster")
        return mode
