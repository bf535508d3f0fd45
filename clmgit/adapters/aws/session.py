"""Sessions and clients for a cluster's account and region, and AWS errors as `ApplyError`s."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from clmgit.errors import ApplyError, ConfigError
from clmgit.model import Cluster


def session_for(cluster: Cluster) -> boto3.Session:
    """A session in the cluster's region, credentials from boto3's standard chain."""
    if not cluster.region:
        raise ConfigError(f"cluster {cluster.id} has no region; set it in the registry")
    return boto3.Session(region_name=cluster.region)


def credentials_found() -> bool:
    """Whether boto3's standard chain finds credentials (environment, files, roles)."""
    return boto3.Session().get_credentials() is not None


def make_client(session: boto3.Session, service: str, *, max_attempts: int = 10) -> Any:
    if not session.region_name:
        raise ConfigError("no AWS region is set; set AWS_DEFAULT_REGION or the cluster's region")
    config = Config(retries={"mode": "standard", "max_attempts": max_attempts},
                    user_agent_extra="clmgit")
    return session.client(service, config=config)


@contextmanager
def aws_errors(what: str) -> Iterator[None]:
    """Turn an AWS error into an `ApplyError` that says what was being done."""
    try:
        yield
    except ClientError as e:
        error = e.response.get("Error", {})
        raise ApplyError(f"{what}: {error.get('Code', 'Error')}: {error.get('Message', e)}") from e
    except BotoCoreError as e:
        raise ApplyError(f"{what}: {e}") from e


def stack_missing(e: ClientError) -> bool:
    """CloudFormation says a stack is missing with a ValidationError in words only."""
    return "does not exist" in str(e.response.get("Error", {}).get("Message", ""))
