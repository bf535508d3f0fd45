"""Sessions and clients for a cluster's account and region, and AWS errors as `ApplyError`s."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import botocore.loaders
import botocore.session
from botocore.config import Config
from botocore.credentials import CredentialProvider, CredentialResolver
from botocore.exceptions import BotoCoreError, ClientError

from clmgit import events
from clmgit.errors import ApplyError, ConfigError


def base_session(region: str, credentials: CredentialProvider | None = None) -> boto3.Session:
    """A session in `region`, credentials from `credentials` or else boto3's standard chain.
    Sessions share one reader of botocore's service models: each session would otherwise parse
    the JSON of every service it makes a client for (EC2's alone is 100 ms of CPU), once per
    cluster."""
    core = botocore.session.get_session()
    core.register_component("data_loader", _models())
    if credentials is not None:
        core.register_component("credential_provider", CredentialResolver([credentials]))
    return boto3.Session(botocore_session=core, region_name=region)


@functools.cache
def _models() -> botocore.loaders.Loader:
    """The process's reader of service models (AWS_DATA_PATH honoured, as a session's own is); it
    keeps what it read, files that do not change while the process runs."""
    loader: botocore.loaders.Loader = botocore.session.get_session().get_component("data_loader")
    return loader


def credentials_found() -> bool:
    """Whether boto3's standard chain finds credentials (environment, files, roles)."""
    return boto3.Session().get_credentials() is not None


#: Seconds to wait for a connection and for an answer. botocore's 60 s read timeout would let a
#: call that hangs outlast an interrupted run's stop by minutes; no call of clmgit's waits on
#: AWS for long (waits poll).
CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 20.0


def make_client(session: boto3.Session, service: str) -> Any:
    """A client with bounded timeouts and botocore's standard retries; their number is
    `AWS_MAX_ATTEMPTS` (or `max_attempts` of the AWS config file) when set, else 3."""
    if not session.region_name:
        raise ConfigError("no AWS region is set; set AWS_DEFAULT_REGION or the cluster's region")
    config = Config(retries={"mode": "standard"}, connect_timeout=CONNECT_TIMEOUT,
                    read_timeout=READ_TIMEOUT, user_agent_extra="clmgit")
    made = session.client(service, config=config)
    made.meta.events.register("after-call", _count_retries)
    return made


def _count_retries(parsed: Any = None, **_: Any) -> None:
    """botocore's retries of a call that got an answer, for the metrics (`clmgit.events`)."""
    attempts = (parsed or {}).get("ResponseMetadata", {}).get("RetryAttempts", 0)
    if attempts:
        events.emit(events.RETRY, target="aws", count=attempts)


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
