"""The AWS roles a run assumes (`aws:` in clmgit.yaml, `CLMGIT_AWS_ROLES`), how a record names
its account, and the way to a cluster's API server; the role's session on moto."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from clmgit.access import Access, account_of, check_record, parse_roles
from clmgit.adapters.aws.identity import assume_role, caller_account, forget, session_name_for
from clmgit.errors import ConfigError
from tests.helpers.configrepo import cluster as make_cluster

ROLE = "arn:aws:iam::{account}:role/clmgit"
OTHER = "999999999999"


def test_an_explicit_role_wins_over_the_template() -> None:
    roles = parse_roles({"aws": {"role": ROLE}}, "clmgit.yaml",
                        {"CLMGIT_AWS_ROLES": f'{{"{OTHER}": "arn:aws:iam::{OTHER}:role/x"}}'})

    assert roles.role_for(OTHER) == f"arn:aws:iam::{OTHER}:role/x"
    assert roles.role_for("111111111111") == "arn:aws:iam::111111111111:role/clmgit"
    assert parse_roles({}, "clmgit.yaml", {}).role_for(OTHER) is None


@pytest.mark.parametrize(("settings", "env", "said"), [
    ({"aws": "arn"}, {}, "key 'aws' must be a mapping"),
    ({"aws": {"roles": ROLE}}, {}, "aws has unknown key 'roles'"),
    ({"aws": {"role": "clmgit"}}, {}, "aws.role must be a role ARN"),
    ({"aws": {"external_id_from": "$X"}}, {}, "must name an environment variable"),
    ({}, {"CLMGIT_AWS_ROLES": "[1]"}, "CLMGIT_AWS_ROLES must be a JSON object"),
    ({}, {"CLMGIT_AWS_ROLES": '{"123456789012": "arn:aws:iam::999999999999:role/x"}'},
     "a role ARN in that same account"),
])
def test_malformed_settings_are_one_sentence(settings, env, said) -> None:
    with pytest.raises(ConfigError, match=said.replace("$", r"\$")):
        parse_roles(settings, "clmgit.yaml", env)


def test_the_external_id_is_read_from_the_variable_named() -> None:
    roles = parse_roles({"aws": {"role": ROLE, "external_id_from": "EXT"}}, "clmgit.yaml", {})

    assert roles.external_id({"EXT": "s3cret"}) == "s3cret"
    with pytest.raises(ConfigError, match=r"names \$EXT, which is not set") as e:
        roles.external_id({})
    assert "s3cret" not in str(e.value)


def test_a_record_must_agree_with_its_id() -> None:
    c = make_cluster(id=f"aws:{OTHER}:eu-central-1:kube-1")

    assert check_record(dataclasses.replace(c, infrastructure_account=f"aws:{OTHER}")) == OTHER
    with pytest.raises(ConfigError, match=f"its id names account {OTHER} but its "
                                          "infrastructure_account is aws:123456789012"):
        check_record(c)
    with pytest.raises(ConfigError, match="is not of the form aws:<12-digit account id>"):
        account_of(dataclasses.replace(c, infrastructure_account="gcp:x"))


def test_auto_takes_kubeconfig_then_token_then_eks() -> None:
    aws, eks = make_cluster(id="a"), dataclasses.replace(make_cluster(id="b"),
                                                        provider="zalando-eks")

    assert Access(token="t", kubeconfig="k").kube_mode(aws) == "kubeconfig"
    assert Access(token="t").kube_mode(aws) == "token"
    assert Access().kube_mode(eks) == "eks"
    with pytest.raises(ConfigError, match="give --token"):
        Access().kube_mode(aws)
    with pytest.raises(ConfigError, match="--kube-auth token needs"):
        Access(kube_auth="token", kubeconfig="k").kube_mode(aws)


def test_the_session_name_names_clmgit_and_the_cluster() -> None:
    assert session_name_for("kube-1") == "clmgit-kube-1"
    assert session_name_for("a:b c/" + "x" * 80) == ("clmgit-a-b-c-" + "x" * 80)[:64]


def test_an_assumed_role_acts_in_its_account_and_is_refreshed_before_it_expires(
        moto_endpoint: str) -> None:
    forget()
    now = [datetime.now(UTC)]
    base = boto3.Session(region_name="eu-central-1")
    role = f"arn:aws:iam::{OTHER}:role/clmgit"

    session = assume_role(base, role, name="kube-1", external_id=None,
                          time_fetcher=lambda: now[0])
    first = session.get_credentials().get_frozen_credentials().access_key

    assert caller_account(session) == OTHER
    assert caller_account(base) == "123456789012"
    again = assume_role(base, role, name="kube-1", external_id=None)
    assert again.get_credentials().get_frozen_credentials().access_key == first  # cached
    now[0] += timedelta(minutes=50)  # 10 minutes before the hour's end
    assert session.get_credentials().get_frozen_credentials().access_key != first
    forget()
