"""moto in server mode for tests and the demo: AWS on 127.0.0.1 and a free port, boto3 talking
HTTP to it through `AWS_ENDPOINT_URL`, with the patches of `moto_shims` applied.

Standalone: `python -m clmgit_sandbox.aws [--port N]` serves until Ctrl-C, SIGTERM or SIGHUP.
Stock `moto_server` lacks the patches and fails on what clmgit needs.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from clmgit_sandbox import moto_shims

REGION = "eu-central-1"
ACCOUNT = "123456789012"  # moto's default account

#: Variables that would point boto3 elsewhere than moto; cleared while the sandbox runs.
_FOREIGN = ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN")


def aws_environment(endpoint: str) -> dict[str, str]:
    """What boto3 needs to talk to moto at `endpoint` with throw-away credentials."""
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }


@contextmanager
def moto_server(*, set_environment: bool = True, port: int = 0) -> Iterator[str]:
    """Start moto (patched) on `port` (0: a free one), yield its endpoint URL, stop it; with
    `set_environment` the process environment points boto3 at it meanwhile and is restored
    afterwards."""
    from moto.server import ThreadedMotoServer  # a test/demo dependency only

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # a line per request otherwise
    patches = moto_shims.Patcher()
    moto_shims.install(patches)
    _count_changes(patches)
    _list_backends_once(patches)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    saved = {name: os.environ.get(name) for name in (*_FOREIGN, *aws_environment(endpoint))}
    global _serving
    try:
        if set_environment:
            _update(os.environ, {name: None for name in _FOREIGN})
            _update(os.environ, aws_environment(endpoint))
            _serving += 1
        yield endpoint
    finally:
        if set_environment:
            _serving -= 1
        server.stop()
        patches.undo()
        if set_environment:
            _update(os.environ, saved)


def _list_backends_once(mp: moto_shims.Patcher) -> None:
    # moto's server finds each request's backend by listing its own package folder (a listdir
    # and an isdir per service, 3.5 ms) under the lock every request of the server waits on;
    # the folder does not change while the server runs.
    import moto.backends

    listed = tuple(moto.backends.list_of_moto_modules())
    mp.setattr(moto.backends, "list_of_moto_modules", lambda: iter(listed))


#: How many requests that may change something (every action but Describe*, List* and Get*)
#: the moto of this process has answered; and how many `moto_server`s that boto3 is pointed at
#: run in this process.
_changes = 0
_serving = 0
_READS = ("Describe", "List", "Get")


def _count_changes(mp: moto_shims.Patcher) -> None:
    from moto.core.responses import BaseResponse

    answer = BaseResponse.call_action

    def call_action(self: BaseResponse) -> Any:
        global _changes
        try:
            return answer(self)
        finally:  # counted once answered, so a reader that sees the count sees the change
            if not self._get_action().startswith(_READS):
                _changes += 1

    mp.setattr(BaseResponse, "call_action", call_action)


def moto_changes() -> Callable[[], int] | None:
    """A reading of the count of changing requests when boto3 talks to a moto in this process,
    which is what lets a poller (the node simulator) skip asking moto while nothing changed;
    None otherwise (moto in another process: ask every time)."""
    return (lambda: _changes) if _serving else None


def publish_image(name: str, owner: str, *, public: bool = True,
                  share_with: tuple[str, ...] = ()) -> str:
    """Register an image in account `owner` (through an assumed role there, as moto keeps an
    account per set of credentials), public or shared with the accounts `share_with`, as an AMI
    vendor publishes one; its id."""
    import boto3

    sts = boto3.Session(region_name=REGION).client("sts")
    creds = sts.assume_role(RoleArn=f"arn:aws:iam::{owner}:role/image-publisher",
                            RoleSessionName="image-publisher")["Credentials"]
    ec2 = boto3.Session(region_name=REGION, aws_access_key_id=creds["AccessKeyId"],
                        aws_secret_access_key=creds["SecretAccessKey"],
                        aws_session_token=creds["SessionToken"]).client("ec2")
    image = ec2.register_image(Name=name, RootDeviceName="/dev/xvda",
                               Architecture="arm64" if "arm64" in name else "x86_64")["ImageId"]
    grants = [{"Group": "all"}] if public else [{"UserId": account} for account in share_with]
    if grants:
        ec2.modify_image_attribute(ImageId=image, LaunchPermission={"Add": grants})
    return str(image)


def _update(environ: os._Environ[str], values: Mapping[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m clmgit_sandbox.aws",
                                     description="moto in server mode, with clmgit's patches, "
                                                 "on 127.0.0.1 until Ctrl-C or SIGTERM.")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: a free one)")
    args = parser.parse_args(argv)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: stop.set())
    try:  # moto's server thread would die on a busy port and leave start() waiting for ever
        socket.create_server(("127.0.0.1", args.port)).close()
    except OSError as e:
        print(f"cannot listen on 127.0.0.1:{args.port}: {e.strerror}", file=sys.stderr)
        return 1
    with moto_server(port=args.port, set_environment=False) as endpoint:
        exports = " ".join(f"{k}={v}" for k, v in aws_environment(endpoint).items())
        print(f"moto (with clmgit's patches) serving {endpoint}; point boto3, the AWS CLI and "
              f"clmgit at it with:\nexport {exports}", flush=True)
        stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
