"""The EC2 answers `convert --check` renders both sides with: AWS's, or the offline stand-in
(`clmgit.config.offline.OfflineEc2`). Light to import: the CLI names the choices at start-up;
boto3 is imported only when AWS's answers may be wanted."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clmgit.accounts import Ec2Info


class Ec2Source(StrEnum):
    auto = "auto"  # AWS's if boto3's chain has credentials and a region, else offline
    aws = "aws"
    offline = "offline"


def ec2_answers(choice: Ec2Source) -> Ec2Info:
    """AWS's answers (credentials and region from boto3's chain) or the offline stand-in."""
    from clmgit.config.offline import OfflineEc2

    if choice is Ec2Source.offline:
        return OfflineEc2()
    import boto3

    from clmgit.adapters.aws.clmaccount import ClmAccount

    session = boto3.Session()
    configured = session.get_credentials() is not None and session.region_name
    if choice is Ec2Source.aws or configured:
        return ClmAccount(session)
    return OfflineEc2()
