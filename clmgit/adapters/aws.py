"""AWS through boto3: CloudFormation stacks (`StackBackend`) and Auto Scaling node pools
(`NodePoolBackend`). The only module that imports boto3 and botocore.

Clients come from boto3's standard configuration (profiles, roles, `AWS_ENDPOINT_URL`), in the
cluster's region, with botocore's "standard" retry mode: throttling and transient errors are
retried there, with its own backoff, and nowhere else. Waiting for stacks and instances goes
through the engine's `Clock`. Every `ClientError` leaves this module as an `ApplyError`.

Stacks change only through change sets. A template over 51,200 bytes is uploaded to an S3 bucket
(`clmgit-templates-<account>-<region>` unless given) and passed by URL. A dry run creates the
change set, describes it and deletes it again (with the empty stack a CREATE change set makes);
the only thing it leaves is the S3 copy of a large template.

moto gaps (moto 5.2), worked around in the sandbox, not here (`clmgit/sandbox/moto_shims.py`):
moto computes no outputs for a stack changed through a change set; has no
UpdateTerminationProtection and deletes protected stacks; accepts unknown resource types; raises
resource failures out of ExecuteChangeSet instead of failing the stack (no CREATE_FAILED events,
no rollback); and reports every Auto Scaling instance at its launch template's default version.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from clmgit.engine.clock import Backoff, Clock, SystemClock, wait_until
from clmgit.engine.nodepools import (
    ASG,
    HEALTHY,
    IN_SERVICE,
    Instance,
    PoolState,
    check_capacity,
    is_outdated,
)
from clmgit.engine.stacks import (
    Operation,
    ResourceChange,
    StackInfo,
    StackResult,
    StackTemplate,
    diff_resources,
)
from clmgit.errors import ApplyError, ConfigError
from clmgit.model import Cluster
from clmgit.stacknames import node_pool_stack_name

TEMPLATE_BODY_LIMIT = 51_200  # bytes; CloudFormation's limit for a template passed inline
CAPABILITIES = ["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"]
STACK_TYPE = "AWS::CloudFormation::Stack"
ASG_TYPE = "AWS::AutoScaling::AutoScalingGroup"

#: A stack whose creation failed can only be deleted; one in review is an empty shell.
RECREATE = frozenset(
    {"ROLLBACK_COMPLETE", "ROLLBACK_FAILED", "CREATE_FAILED", "REVIEW_IN_PROGRESS"})
#: States only a human can resolve.
STUCK = frozenset({"UPDATE_ROLLBACK_FAILED", "DELETE_FAILED", "IMPORT_ROLLBACK_FAILED"})
SUCCEEDED = frozenset({"CREATE_COMPLETE", "UPDATE_COMPLETE"})
NO_CHANGES = ("didn't contain changes", "No updates are to be performed")

STACK_BACKOFF = Backoff(initial=5, factor=1.5, maximum=30, timeout=3600)
INSTANCE_BACKOFF = Backoff(initial=10, factor=1.5, maximum=30, timeout=1800)


def session_for(cluster: Cluster) -> boto3.Session:
    """A session in the cluster's region, credentials from boto3's standard chain."""
    if not cluster.region:
        raise ConfigError(f"cluster {cluster.id} has no region; set it in the registry")
    return boto3.Session(region_name=cluster.region)


def make_client(session: boto3.Session, service: str, *, max_attempts: int = 10) -> Any:
    if not session.region_name:
        raise ConfigError("no AWS region is set; set AWS_DEFAULT_REGION or the cluster's region")
    config = Config(retries={"mode": "standard", "max_attempts": max_attempts},
                    user_agent_extra="clmgit")
    return session.client(service, config=config)  # type: ignore[call-overload]


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


def _not_found(e: ClientError) -> bool:
    """CloudFormation says a stack is missing with a ValidationError in words only."""
    return "does not exist" in str(e.response.get("Error", {}).get("Message", ""))


# --- CloudFormation ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Stack:
    id: str
    name: str
    status: str
    reason: str
    protected: bool
    outputs: Mapping[str, str] = field(default_factory=dict)
    tags: Mapping[str, str] = field(default_factory=dict)

    @property
    def busy(self) -> bool:
        return self.status.endswith("_IN_PROGRESS") and self.status != "REVIEW_IN_PROGRESS"

    @classmethod
    def from_api(cls, raw: Mapping[str, Any]) -> _Stack:
        return cls(
            id=raw["StackId"], name=raw["StackName"], status=raw["StackStatus"],
            reason=raw.get("StackStatusReason") or "",
            protected=bool(raw.get("EnableTerminationProtection")),
            outputs={o["OutputKey"]: str(o.get("OutputValue", ""))
                     for o in raw.get("Outputs") or ()},
            tags={t["Key"]: t["Value"] for t in raw.get("Tags") or ()},
        )


class CloudFormationStacks:
    """The `StackBackend` on CloudFormation."""

    def __init__(
        self,
        session: boto3.Session,
        *,
        clock: Clock | None = None,
        backoff: Backoff = STACK_BACKOFF,
        template_bucket: str | None = None,
    ) -> None:
        self._session = session
        self._cf = make_client(session, "cloudformation")
        self._clock = clock or SystemClock()
        self._backoff = backoff
        self._bucket = template_bucket

    # --- StackBackend ---

    def apply_stack(self, stack: StackTemplate, *, dry_run: bool) -> StackResult:
        current = self._settled(stack.name)
        if current is not None and current.status in RECREATE:
            if dry_run:
                # No change set can be made before the failed stack is gone: read the template.
                return StackResult(stack.name, "create", {}, diff_resources("", stack.body),
                                   dry_run=True)
            self._delete(current)
            current = None
        if current is not None and current.status in STUCK:
            raise ApplyError(
                f"stack {stack.name} is in {current.status} ({current.reason or 'no reason'}); "
                "resolve it in CloudFormation, then run again"
            )
        operation: Operation = "update" if current is not None else "create"
        change_set = self._create_change_set(stack, operation)
        described = self._await_change_set(change_set)
        if described["Status"] == "FAILED":
            return self._unchanged(stack, current, change_set, described, dry_run=dry_run)
        changes = self._changes(change_set)
        if dry_run:
            self._discard(stack.name, change_set, operation)
            outputs = current.outputs if current else {}
            return StackResult(stack.name, operation, outputs, changes, dry_run=True)
        final = self._execute(stack.name, change_set)
        if stack.termination_protection:
            self._protect(final)
        return StackResult(stack.name, operation, final.outputs, changes)

    def delete_stack(self, name: str, *, lift_protection: bool, dry_run: bool) -> StackResult:
        current = self._settled(name)
        if current is None:
            return StackResult(name, "none", dry_run=dry_run)
        if current.protected and not lift_protection:
            raise ApplyError(
                f"stack {name} has termination protection and is not deleted; "
                "remove it from cf-deletions.yaml or lift the protection by hand"
            )
        if not dry_run:
            self._delete(current)
        return StackResult(name, "delete", dry_run=dry_run)

    def find_stacks(self, tags: Mapping[str, str]) -> list[StackInfo]:
        with aws_errors("listing stacks"):
            pages = self._cf.get_paginator("describe_stacks").paginate()
            stacks = [_Stack.from_api(raw) for page in pages for raw in page["Stacks"]]
        return [
            StackInfo(s.name, s.tags)
            for s in stacks
            if s.status != "DELETE_COMPLETE" and all(s.tags.get(k) == v for k, v in tags.items())
        ]

    # --- stacks ---

    def _describe(self, name_or_id: str) -> _Stack | None:
        with aws_errors(f"describing stack {name_or_id}"):
            try:
                raw = self._cf.describe_stacks(StackName=name_or_id)["Stacks"]
            except ClientError as e:
                if _not_found(e):
                    return None
                raise
        return _Stack.from_api(raw[0]) if raw else None

    def _settled(self, name_or_id: str) -> _Stack | None:
        """The stack once no operation is running on it (None: it does not exist)."""
        return wait_until(
            lambda: self._describe(name_or_id), lambda s: s is None or not s.busy,
            clock=self._clock, backoff=self._backoff,
            what=f"stack {name_or_id} to finish its running operation",
        )

    def _delete(self, stack: _Stack) -> None:
        with aws_errors(f"deleting stack {stack.name}"):
            if stack.protected:
                self._cf.update_termination_protection(
                    StackName=stack.id, EnableTerminationProtection=False)
            self._cf.delete_stack(StackName=stack.id)
        # By id: a deleted stack stays describable (DELETE_COMPLETE) by id, not by name.
        final = self._settled(stack.id)
        if final is not None and final.status != "DELETE_COMPLETE":
            raise ApplyError(f"deleting stack {stack.name} failed: {self._failure(final)}")

    def _protect(self, stack: _Stack) -> None:
        if not stack.protected:
            with aws_errors(f"protecting stack {stack.name}"):
                self._cf.update_termination_protection(
                    StackName=stack.id, EnableTerminationProtection=True)

    # --- change sets ---

    def _create_change_set(self, stack: StackTemplate, operation: Operation) -> str:
        with aws_errors(f"creating a change set for stack {stack.name}"):
            created = self._cf.create_change_set(
                StackName=stack.name,
                ChangeSetName=f"clmgit-{uuid.uuid4().hex}",
                ChangeSetType=operation.upper(),
                Capabilities=CAPABILITIES,
                Tags=[{"Key": k, "Value": v} for k, v in sorted(stack.tags.items())],
                **self._template_source(stack.name, stack.body),
            )
        return str(created["Id"])

    def _await_change_set(self, change_set: str) -> dict[str, Any]:
        def describe() -> dict[str, Any]:
            with aws_errors("describing a change set"):
                return dict(self._cf.describe_change_set(ChangeSetName=change_set))

        return wait_until(
            describe, lambda d: d["Status"] in ("CREATE_COMPLETE", "FAILED"),
            clock=self._clock, backoff=self._backoff, what=f"change set {change_set}",
        )

    def _changes(self, change_set: str) -> tuple[ResourceChange, ...]:
        with aws_errors("describing a change set"):
            pages = self._cf.get_paginator("describe_change_set").paginate(ChangeSetName=change_set)
            raw = [c.get("ResourceChange", {}) for page in pages for c in page.get("Changes", ())]
        return tuple(
            ResourceChange(c.get("Action", ""), c.get("LogicalResourceId", ""),
                           c.get("ResourceType", ""))
            for c in raw
        )

    def _unchanged(
        self, stack: StackTemplate, current: _Stack | None, change_set: str,
        described: Mapping[str, Any], *, dry_run: bool,
    ) -> StackResult:
        """A change set that failed: "no changes" is success, anything else an error."""
        operation: Operation = "update" if current is not None else "create"
        self._discard(stack.name, change_set, operation)
        reason = str(described.get("StatusReason", ""))
        if current is None or not any(text in reason for text in NO_CHANGES):
            raise ApplyError(f"stack {stack.name}: the change set failed: {reason}")
        if stack.termination_protection and not dry_run:
            self._protect(current)
        return StackResult(stack.name, "none", current.outputs, dry_run=dry_run)

    def _discard(self, name: str, change_set: str, operation: Operation) -> None:
        with aws_errors(f"deleting a change set of stack {name}"):
            self._cf.delete_change_set(ChangeSetName=change_set)
            if operation == "create":
                # A CREATE change set made an empty stack in REVIEW_IN_PROGRESS; leave nothing.
                self._cf.delete_stack(StackName=name)

    def _execute(self, name: str, change_set: str) -> _Stack:
        with aws_errors(f"executing the change set of stack {name}"):
            self._cf.execute_change_set(ChangeSetName=change_set)
        final = self._settled(name)
        if final is None or final.status not in SUCCEEDED:
            reason = self._failure(final) if final else "the stack disappeared"
            raise ApplyError(f"stack {name} failed: {reason}")
        return final

    def _failure(self, stack: _Stack) -> str:
        """The first failed resource of the stack's last operation, with its reason."""
        first = None
        with aws_errors(f"reading the events of stack {stack.name}"):
            pages = self._cf.get_paginator("describe_stack_events").paginate(StackName=stack.id)
            for event in (e for page in pages for e in page["StackEvents"]):  # newest first
                status = event.get("ResourceStatus", "")
                if event.get("ResourceType") == STACK_TYPE and status in (
                    "CREATE_IN_PROGRESS", "UPDATE_IN_PROGRESS", "DELETE_IN_PROGRESS"
                ):
                    break  # the start of the last operation
                if status.endswith("_FAILED") and event.get("ResourceType") != STACK_TYPE:
                    first = event
        if first is None:
            return f"{stack.status}: {stack.reason or 'see the stack events'}"
        return (f"{first['LogicalResourceId']} ({first.get('ResourceType', '')}) "
                f"{first['ResourceStatus']}: {first.get('ResourceStatusReason', '')}")

    # --- large templates ---

    def _template_source(self, name: str, body: str) -> dict[str, str]:
        if len(body.encode()) <= TEMPLATE_BODY_LIMIT:
            return {"TemplateBody": body}
        bucket = self._template_bucket()
        key = f"{name}/{hashlib.sha256(body.encode()).hexdigest()}.template"
        with aws_errors(f"uploading the template of stack {name} to s3://{bucket}"):
            make_client(self._session, "s3").put_object(Bucket=bucket, Key=key, Body=body.encode())
        return {"TemplateURL": f"https://{bucket}.s3.{self._session.region_name}.amazonaws.com/{key}"}

    def _template_bucket(self) -> str:
        """The bucket for large templates, created on first use."""
        region = self._session.region_name
        s3 = make_client(self._session, "s3")
        with aws_errors("preparing the template bucket"):
            if self._bucket is None:
                account = make_client(self._session, "sts").get_caller_identity()["Account"]
                self._bucket = f"clmgit-templates-{account}-{region}"
            try:
                s3.head_bucket(Bucket=self._bucket)
            except ClientError as e:
                if e.response.get("Error", {}).get("Code") not in ("404", "NoSuchBucket"):
                    raise
                where = {} if region == "us-east-1" else {
                    "CreateBucketConfiguration": {"LocationConstraint": region}}
                s3.create_bucket(Bucket=self._bucket, **where)
        return self._bucket


# --- Auto Scaling ----------------------------------------------------------------------------


class _LaunchTemplates:
    """Launch template versions resolved to numbers, and their instance types, looked up once."""

    def __init__(self, ec2: Any) -> None:
        self._ec2 = ec2
        self._versions: dict[str, tuple[str, str]] = {}  # id -> (default, latest)
        self._types: dict[tuple[str, str], str] = {}

    def version(self, template_id: str, version: str) -> str:
        if not template_id or version not in ("", "$Default", "$Latest"):
            return version
        if template_id not in self._versions:
            raw = self._ec2.describe_launch_templates(LaunchTemplateIds=[template_id])
            lt = raw["LaunchTemplates"][0]
            self._versions[template_id] = (str(lt["DefaultVersionNumber"]),
                                           str(lt["LatestVersionNumber"]))
        default, latest = self._versions[template_id]
        return latest if version == "$Latest" else default

    def instance_type(self, template_id: str, version: str) -> str:
        if (template_id, version) not in self._types:
            raw = self._ec2.describe_launch_template_versions(
                LaunchTemplateId=template_id, Versions=[version])
            data = raw["LaunchTemplateVersions"][0].get("LaunchTemplateData", {})
            self._types[template_id, version] = str(data.get("InstanceType", ""))
        return self._types[template_id, version]


class AutoScalingPools:
    """The `NodePoolBackend` on Auto Scaling: a pool's groups are those of its stack."""

    def __init__(
        self, session: boto3.Session, *, clock: Clock | None = None,
        backoff: Backoff = INSTANCE_BACKOFF,
    ) -> None:
        self._cf = make_client(session, "cloudformation")
        self._asg = make_client(session, "autoscaling")
        self._ec2 = make_client(session, "ec2")
        self._clock = clock or SystemClock()
        self._backoff = backoff

    def pool_state(self, cluster: Cluster, pool: str) -> PoolState:
        stack = node_pool_stack_name(cluster, pool)
        with aws_errors(f"reading node pool {pool} (stack {stack})"):
            raw_groups = self._groups(self._group_names(stack))
            templates = _LaunchTemplates(self._ec2)
            asgs = [self._asg_of(raw, templates) for raw in raw_groups]
            instances = [
                self._instance_of(raw_instance, asg, templates)
                for raw, asg in zip(raw_groups, asgs, strict=True)
                for raw_instance in raw.get("Instances", ())
            ]
        return PoolState(pool, tuple(asgs), tuple(instances))

    def set_desired_capacity(self, asg: str, desired: int) -> None:
        with aws_errors(f"scaling {asg} to {desired}"):
            group = self._groups([asg])
            if not group:
                raise ApplyError(f"Auto Scaling group {asg} does not exist")
            check_capacity(asg, desired, int(group[0]["MaxSize"]))
            self._asg.set_desired_capacity(
                AutoScalingGroupName=asg, DesiredCapacity=desired, HonorCooldown=False)

    def terminate_instance(self, instance_id: str, *, decrement_capacity: bool) -> None:
        with aws_errors(f"terminating {instance_id}"):
            # Asking first keeps a repeated call (a resumed run) from being an error.
            known = self._asg.describe_auto_scaling_instances(InstanceIds=[instance_id])
            if not known["AutoScalingInstances"]:
                return
            self._asg.terminate_instance_in_auto_scaling_group(
                InstanceId=instance_id, ShouldDecrementDesiredCapacity=decrement_capacity)

    def wait_for_instances_in_service(self, asg: str) -> None:
        def fetch() -> dict[str, Any]:
            with aws_errors(f"reading {asg}"):
                groups = self._groups([asg])
            if not groups:
                raise ApplyError(f"Auto Scaling group {asg} does not exist")
            return groups[0]

        def ready(group: Mapping[str, Any]) -> bool:
            states = [(i["LifecycleState"], i["HealthStatus"]) for i in group.get("Instances", ())]
            serving = sum(1 for s in states if s == (IN_SERVICE, HEALTHY))
            pending = any(state.startswith("Pending") for state, _ in states)
            return serving >= int(group["DesiredCapacity"]) and not pending

        wait_until(fetch, ready, clock=self._clock, backoff=self._backoff,
                   what=f"the instances of {asg} to come into service")

    # --- reading ---

    def _group_names(self, stack: str) -> list[str]:
        try:
            pages = self._cf.get_paginator("list_stack_resources").paginate(StackName=stack)
            resources = [r for page in pages for r in page["StackResourceSummaries"]]
        except ClientError as e:
            if _not_found(e):
                return []
            raise
        return [r["PhysicalResourceId"] for r in resources
                if r["ResourceType"] == ASG_TYPE and r.get("PhysicalResourceId")]

    def _groups(self, names: list[str]) -> list[dict[str, Any]]:
        if not names:
            return []
        pages = self._asg.get_paginator("describe_auto_scaling_groups").paginate(
            AutoScalingGroupNames=names)
        return [g for page in pages for g in page["AutoScalingGroups"]]

    @staticmethod
    def _asg_of(raw: Mapping[str, Any], templates: _LaunchTemplates) -> ASG:
        mixed = raw.get("MixedInstancesPolicy", {}).get("LaunchTemplate", {})
        spec = raw.get("LaunchTemplate") or mixed.get("LaunchTemplateSpecification") or {}
        template_id = spec.get("LaunchTemplateId", "")
        version = templates.version(template_id, spec.get("Version", "$Default"))
        overrides = tuple(o["InstanceType"] for o in mixed.get("Overrides", ())
                          if "InstanceType" in o)
        if not overrides and template_id:
            overrides = (templates.instance_type(template_id, version),)
        return ASG(
            name=raw["AutoScalingGroupName"], min_size=int(raw["MinSize"]),
            max_size=int(raw["MaxSize"]), desired_capacity=int(raw["DesiredCapacity"]),
            launch_template_id=template_id, launch_template_version=version,
            instance_types=tuple(t for t in overrides if t),
            availability_zones=tuple(raw.get("AvailabilityZones", ())),
        )

    @staticmethod
    def _instance_of(raw: Mapping[str, Any], asg: ASG, templates: _LaunchTemplates) -> Instance:
        spec = raw.get("LaunchTemplate") or {}
        template_id = spec.get("LaunchTemplateId", "")
        version = templates.version(template_id, spec.get("Version", ""))
        instance_type = raw.get("InstanceType", "")
        return Instance(
            id=raw["InstanceId"], asg=asg.name, az=raw.get("AvailabilityZone", ""),
            launch_template_id=template_id, launch_template_version=version,
            instance_type=instance_type, lifecycle_state=raw.get("LifecycleState", ""),
            health=raw.get("HealthStatus", ""),
            outdated=is_outdated(asg, launch_template_id=template_id,
                                 launch_template_version=version, instance_type=instance_type),
        )


# --- the account's network -------------------------------------------------------------------


@dataclass(frozen=True)
class Network:
    """What the region's account offers a cluster: its available zones (sorted), the default
    VPC's first subnet per zone (by subnet id), and that VPC's IPv4 CIDR ("" without one)."""

    zones: tuple[str, ...]
    subnets: Mapping[str, str]
    vpc_cidr: str


def network(session: boto3.Session, region: str) -> Network:
    """The account's network in `region`, as `Network` tells it."""
    ec2 = make_client(session, "ec2")
    with aws_errors(f"reading the network of {region}"):
        zones = sorted(
            z["ZoneName"] for z in ec2.describe_availability_zones()["AvailabilityZones"]
            if z.get("State", "available") == "available"
        )
        vpcs = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"]
        subnets: dict[str, str] = {}
        if vpcs:
            found = ec2.describe_subnets(
                Filters=[{"Name": "vpc-id", "Values": [vpcs[0]["VpcId"]]}])["Subnets"]
            for subnet in sorted(found, key=lambda s: s["SubnetId"]):
                subnets.setdefault(subnet["AvailabilityZone"], subnet["SubnetId"])
    return Network(tuple(zones), subnets, vpcs[0]["CidrBlock"] if vpcs else "")
