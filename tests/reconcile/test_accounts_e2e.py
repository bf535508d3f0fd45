"""A record in another AWS account than the credentials act in, reconciled through the CLI on moto
(which keeps each account's resources apart and honours the account of assumed-role
credentials): refused before any write, dry runs too; with a role for that account, its stacks
land in that account and nowhere else."""

from __future__ import annotations

import re
from typing import Any

import boto3
import pytest
from clmgit_sandbox.aws import ACCOUNT, REGION

from clmgit.access import Access
from clmgit.adapters.aws.identity import forget
from clmgit.errors import RefusedError
from clmgit.healthstate import UNKNOWN
from clmgit.reconcile.backends import AwsBackends
from clmgit.reconcile.health import Observer, workspace_gates
from clmgit.workspace import open_workspace
from tests.helpers.aws import all_stacks

pytestmark = pytest.mark.slow  # end to end: moto, the emulator, the CLI

OTHER = "999999999999"


@pytest.fixture(autouse=True)
def _fresh_identities():
    forget()  # what an earlier test learnt of accounts and roles
    yield
    forget()


def in_other_account(records: list[dict[str, Any]]) -> None:
    for r in records:
        r["id"] = r["id"].replace(f"aws:{ACCOUNT}:", f"aws:{OTHER}:")
        r["infrastructure_account"] = f"aws:{OTHER}"


def stacks_of(cluster_id: str, session: boto3.Session) -> list[str]:
    cf = session.client("cloudformation", region_name=REGION)
    return sorted(s["StackName"] for s in all_stacks(cf)
                  if {t["Key"]: t["Value"] for t in s.get("Tags", [])}.get(
                      "clmgit/cluster-id") == cluster_id)


def other_account() -> boto3.Session:
    sts = boto3.client("sts", region_name=REGION)
    c = sts.assume_role(RoleArn=f"arn:aws:iam::{OTHER}:role/look", RoleSessionName="test")[
        "Credentials"]
    return boto3.Session(aws_access_key_id=c["AccessKeyId"],
                         aws_secret_access_key=c["SecretAccessKey"],
                         aws_session_token=c["SessionToken"], region_name=REGION)


@pytest.mark.parametrize("dry_run", [False, True], ids=["run", "dry-run"])
def test_a_cluster_of_another_account_is_refused_before_any_write(sandbox_factory, dry_run):
    sandbox = sandbox_factory(1, edit=in_other_account)
    [record] = sandbox.records
    before = (sandbox.path / "clusters.yaml").read_text()

    result = sandbox.reconcile(*(["--dry-run"] if dry_run else []))

    assert result.code == 4, (result.out, result.err)
    said = (f"cluster {record['alias']} is in account {OTHER} (its infrastructure_account), "
            f"but the AWS credentials act in account {ACCOUNT}")
    assert said in result.out + result.err
    assert (sandbox.path / "clusters.yaml").read_text() == before  # no lease, no next_version
    assert stacks_of(record["id"], boto3.Session(region_name=REGION)) == []
    assert stacks_of(record["id"], other_account()) == []


def test_a_record_whose_id_names_another_region_is_refused(sandbox_factory):
    sandbox = sandbox_factory(1, edit=lambda rs: rs[0].update(region="eu-west-1"))

    result = sandbox.reconcile("--dry-run")

    assert result.code == 4, (result.out, result.err)
    assert "its id names region eu-central-1 but its region is eu-west-1" in result.out


@pytest.mark.parametrize("how", ["template", "mapping"])
def test_with_a_role_its_stacks_land_in_its_own_account(sandbox_factory, monkeypatch, how):
    if how == "mapping":
        monkeypatch.setenv("CLMGIT_AWS_ROLES",
                           f'{{"{OTHER}": "arn:aws:iam::{OTHER}:role/clmgit-deployer"}}')
    sandbox = sandbox_factory(1, edit=in_other_account)
    if how == "template":
        sandbox.builder.commit("main", {"clmgit.yaml": "aws:\n  role: "
                                        "arn:aws:iam::{account}:role/clmgit\n"}, "Roles")
    [record] = sandbox.records

    result = sandbox.reconcile()

    assert result.code == 0, (result.out, result.err)
    assert stacks_of(record["id"], other_account())  # created in its own account
    assert stacks_of(record["id"], boto3.Session(region_name=REGION)) == []
    [cluster] = sandbox.registry.clusters()
    assert cluster.status.current_version


def test_a_look_at_health_makes_the_same_account_check_as_reconcile(sandbox_factory):
    """The engine and the look at health ask one factory of backends: a cluster reconcile
    refuses is one a look cannot reach, for the same reason, and nothing is read."""
    sandbox = sandbox_factory(1, edit=in_other_account)
    ws = open_workspace(str(sandbox.path))
    [cluster] = ws.clusters
    backends = AwsBackends(Access(kubeconfig=str(sandbox.kubeconfig)))

    seen = Observer(backends.health, workspace_gates(ws)).look(cluster)

    said = (f"cluster {cluster.alias} is in account {OTHER} (its infrastructure_account), "
            f"but the AWS credentials act in account {ACCOUNT}")
    assert seen.state == UNKNOWN and seen.reasons[0].startswith(
        f"cannot reach the cluster: {said}")
    with pytest.raises(RefusedError, match=re.escape(said)):
        backends(cluster)
