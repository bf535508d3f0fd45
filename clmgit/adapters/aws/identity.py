"""Which AWS account a session acts in, roles assumed into a cluster's account, and the token an
EKS API server takes.

The account is STS's answer to GetCallerIdentity, asked once per credential (an access key) and
kept for the process. An assumed role's credentials are refreshable: botocore asks STS again
before they expire (and at the latest when a call needs them), so a rolling update of hours
keeps working. Sessions are kept per base credential, role, region and cluster: the session name
(`clmgit-<cluster>`) is what CloudTrail shows of a change.
"""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

import boto3
from botocore.credentials import CredentialProvider, RefreshableCredentials

from clmgit.access import NO_ROLES, ROLES_ENV, Roles, check_record
from clmgit.adapters.aws.session import aws_errors, base_session, make_client
from clmgit.errors import ApplyError, ConfigError, RefusedError
from clmgit.model import Cluster

_lock = threading.Lock()
_accounts: dict[str, str] = {}
_assumed: dict[tuple[str, str, str, str], RefreshableCredentials] = {}

#: How long an EKS token is good for (aws-iam-authenticator's presigned URL lasts 15 minutes;
#: a fresh one is made well before).
EKS_TOKEN_SECONDS = 60
EKS_TOKEN_PREFIX = "k8s-aws-v1."
#: The duration asked of AssumeRole; botocore refreshes 15 minutes before the end.
ROLE_SECONDS = 3600


def caller_account(session: boto3.Session) -> str:
    """The account `session` acts in, asked of STS once per access key."""
    key = _access_key(session)
    with _lock:
        known = _accounts.get(key)
    if known is not None:
        return known
    with aws_errors("asking STS which account the AWS credentials belong to"):
        account = str(make_client(session, "sts").get_caller_identity()["Account"])
    with _lock:
        _accounts[key] = account
    return account


def assume_role(base: boto3.Session, role: str, *, name: str, external_id: str | None,
                time_fetcher: Callable[[], datetime] | None = None) -> boto3.Session:
    """A session in `base`'s region with the role's refreshable credentials; the session name
    `clmgit-<name>`."""
    region = str(base.region_name)
    session_name = session_name_for(name)
    cache_key = (_access_key(base), role, region, session_name)
    with _lock:
        credentials = _assumed.get(cache_key)
    if credentials is None:
        sts = make_client(base, "sts")
        params: dict[str, Any] = {"RoleArn": role, "RoleSessionName": session_name,
                                  "DurationSeconds": ROLE_SECONDS}
        if external_id:
            params["ExternalId"] = external_id

        def fetch() -> dict[str, str]:
            with aws_errors(f"assuming role {role}"):
                answer = sts.assume_role(**params)["Credentials"]
            return {"access_key": answer["AccessKeyId"], "secret_key": answer["SecretAccessKey"],
                    "token": answer["SessionToken"],
                    "expiry_time": answer["Expiration"].isoformat()}

        credentials = RefreshableCredentials.create_from_metadata(fetch(), fetch, "assume-role")
        if time_fetcher is not None:
            credentials._time_fetcher = time_fetcher  # a test's clock; botocore reads it
        with _lock:
            credentials = _assumed.setdefault(cache_key, credentials)
    return base_session(region, _Given(credentials))


class _Given(CredentialProvider):  # type: ignore[misc] # botocore has no type hints
    METHOD = "assume-role"
    CANONICAL_NAME = "clmgit-assume-role"

    def __init__(self, credentials: RefreshableCredentials) -> None:
        super().__init__()
        self._credentials = credentials

    def load(self) -> RefreshableCredentials:
        return self._credentials


def session_name_for(name: str) -> str:
    """`clmgit-<name>` in what STS takes as a session name: [\\w+=,.@-], 2 to 64 characters."""
    return ("clmgit-" + re.sub(r"[^\w+=,.@-]", "-", name))[:64]


def eks_token(session: boto3.Session, cluster_name: str) -> str:
    """A bearer token for the EKS cluster `cluster_name`, as aws-iam-authenticator makes it: a
    presigned STS GetCallerIdentity URL that names the cluster in the `x-k8s-aws-id` header."""
    sts = make_client(session, "sts")

    def name_the_cluster(request: Any, **kwargs: Any) -> None:
        request.headers["x-k8s-aws-id"] = cluster_name

    sts.meta.events.register("before-sign.sts.GetCallerIdentity", name_the_cluster)
    with aws_errors(f"making a token for EKS cluster {cluster_name}"):
        url = sts.generate_presigned_url("get_caller_identity", Params={},
                                         ExpiresIn=EKS_TOKEN_SECONDS, HttpMethod="GET")
    encoded = base64.urlsafe_b64encode(str(url).encode()).decode().rstrip("=")
    return EKS_TOKEN_PREFIX + encoded


def _access_key(session: boto3.Session) -> str:
    credentials = session.get_credentials()
    if credentials is None:
        raise ApplyError("no AWS credentials found (environment, ~/.aws, or an instance or "
                         "web-identity role): configure them and run again")
    return str(credentials.get_frozen_credentials().access_key)


def forget() -> None:
    """Drop what the process knows of accounts and assumed roles (tests)."""
    with _lock:
        _accounts.clear()
        _assumed.clear()


def session_for(cluster: Cluster, roles: Roles = NO_ROLES) -> boto3.Session:
    """A session in the cluster's region that acts in the cluster's account: the role `roles`
    has for that account assumed, else the credentials of boto3's standard chain. A cluster
    whose record names another account than the session acts in is refused before any call
    of the engine (its record also must agree with itself on account and region)."""
    if not cluster.region:
        raise ConfigError(f"cluster {cluster.id} has no region; set it in the registry")
    account = check_record(cluster)
    session = base_session(cluster.region)
    role = roles.role_for(account) if account else None
    if role:
        session = assume_role(session, role, name=cluster.alias or cluster.local_id or cluster.id,
                              external_id=roles.external_id())
    if account:
        acting = caller_account(session)
        if acting != account:
            via = f"the role {role} acts" if role else "the AWS credentials act"
            raise RefusedError(
                f"cluster {cluster.alias or cluster.id} is in account {account} "
                f"(its infrastructure_account), but {via} in account {acting}: configure a role "
                f"for {account} (aws.role in clmgit.yaml or {ROLES_ENV}) or use its credentials")
    return session
