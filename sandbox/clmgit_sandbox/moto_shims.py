"""Patches that make moto 5.2 behave like AWS where clmgit relies on it (tests and the demo only).

moto runs in this process (ThreadedMotoServer), so its classes can be patched; boto3 still talks
HTTP to it. Each patch fills one gap between moto and AWS's documented behaviour:

1. A stack changed through a change set gets the outputs of its new template (moto keeps the
   outputs of the template the stack had before, none for a new stack), and its exports: they
   are published, and its `Fn::ImportValue`s read the region's exports (moto does both only for
   CreateStack).
2. A resource that fails during ExecuteChangeSet fails the stack: a CREATE_FAILED/UPDATE_FAILED
   event with the reason, then ROLLBACK_COMPLETE/UPDATE_ROLLBACK_COMPLETE (moto raises the error
   out of the request instead — HTTP 400 or 500).
3. CreateChangeSet refuses resource types AWS does not know with "Template format error:
   Unrecognized resource types" (moto logs a warning and skips the resource). AWS's types are
   those of CloudFormation's resource schemas as cfn-lint ships them for the region; a type AWS
   knows and moto does not model is accepted and, as moto does, made nothing of.
4. UpdateTerminationProtection exists and DeleteStack refuses a protected stack (moto has no such
   action and ignores protection).
5. An Auto Scaling instance reports the launch template version it was launched from (moto
   reports the template's default version for every instance).
6. CloudFormation requests run one at a time. moto's server answers each request in its own
   thread, and a stack's resources live in a lazy map that creates a resource the first time it
   is read, without a lock: a ListStackResources that arrives while ExecuteChangeSet is still
   creating the stack's resources creates the ones not yet made, and the change set then creates
   them again (a node pool stack ends with two or three Auto Scaling groups). AWS shows a stack
   mid-operation; it never creates resources for a reader.
7. DescribeImages shows the public images of other accounts, and those shared with the caller
   (moto keeps each account's images to itself): an AMI publisher's images, as CLM's `amiID`
   finds them by name and owner.
8. A load balancer made by CloudFormation is of the template's `Type` (network or application)
   with its tags (moto makes every one an application load balancer, so a network load
   balancer's TLS listener fails).
9. The short form `!GetAtt [Resource, Attribute]` (a YAML sequence) reads as `Fn::GetAtt` of
   those two strings (moto keeps the sequence's YAML nodes, and the reference is undefined).
10. An Auto Scaling group whose launch template version is `!GetAtt <template>.LatestVersionNumber`
   moves to the template's new version when a change set gives the
   template one, as CloudFormation updates a resource whose GetAtt input changed (moto updates
   only resources whose template text changed, so the group stayed at the old version and no
   template change ever made a node outdated). Instances already running keep the version they
   were launched from (5).

Nothing here changes what clmgit's adapters do; they are written against AWS.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import threading
from collections.abc import Callable
from typing import Any

from moto.autoscaling.models import InstanceState
from moto.cloudformation import parsing
from moto.cloudformation.exceptions import ValidationError
from moto.cloudformation.models import CloudFormationBackend, Event, Stack
from moto.cloudformation.responses import CloudFormationResponse
from moto.core.responses import ActionResult, BaseResponse

STACK_TYPE = "AWS::CloudFormation::Stack"
ASG_TYPE = "AWS::AutoScaling::AutoScalingGroup"


class Patcher:
    """`setattr` that remembers what it replaced; `undo` puts it back (pytest's MonkeyPatch has
    the same two methods and may be passed instead)."""

    def __init__(self) -> None:
        self._saved: list[tuple[Any, str, Any]] = []

    def setattr(self, target: Any, name: str, value: Any, raising: bool = True) -> None:
        self._saved.append((target, name, target.__dict__.get(name, _MISSING)))
        setattr(target, name, value)

    def undo(self) -> None:
        while self._saved:
            target, name, old = self._saved.pop()
            if old is _MISSING:
                delattr(target, name)
            else:
                setattr(target, name, old)


_MISSING = object()


def install(mp: Patcher) -> None:
    """Apply every patch; `mp.undo()` removes them."""
    _change_set_execution(mp)
    _unknown_resource_types(mp)
    _termination_protection(mp)
    _launched_versions(mp)
    _one_request_at_a_time(mp)
    _images_of_other_accounts(mp)
    _load_balancer_types(mp)
    _get_att_sequences(mp)


# --- 1 and 2: executing a change set ----------------------------------------------------------


def _remember_resource(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Tag an error raised while creating or updating a resource with the resource."""

    def wrapper(logical_id: str, resource_json: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(logical_id, resource_json, *args, **kwargs)
        except Exception as e:
            if not hasattr(e, "cfn_resource"):
                e.cfn_resource = (logical_id, resource_json.get("Type", ""))  # type: ignore[attr-defined]  # an attribute of ours
            raise

    return wrapper


def _fail_stack(stack: Stack, change_set: Any, error: Exception) -> None:
    operation = change_set.change_set_type  # CREATE or UPDATE
    logical_id, resource_type = getattr(error, "cfn_resource", (stack.name, STACK_TYPE))
    reason = str(getattr(error, "message", "") or error)
    stack.events.append(Event(
        stack_id=stack.stack_id, stack_name=stack.name, logical_resource_id=logical_id,
        physical_resource_id="", resource_type=resource_type,
        resource_status=f"{operation}_FAILED", resource_status_reason=reason,
        resource_properties=None,
    ))
    rollback = "ROLLBACK" if operation == "CREATE" else "UPDATE_ROLLBACK"
    stack._add_stack_event(f"{rollback}_IN_PROGRESS", resource_status_reason=(
        f"The following resource(s) failed: [{logical_id}]"))
    stack._add_stack_event(f"{rollback}_COMPLETE")
    stack.status = f"{rollback}_COMPLETE"
    change_set.execution_status = "EXECUTE_FAILED"


def _change_set_execution(mp: Patcher) -> None:
    for name in ("parse_and_create_resource", "parse_and_update_resource"):
        mp.setattr(parsing, name, _remember_resource(getattr(parsing, name)))
    original = CloudFormationBackend.execute_change_set
    original_create = CloudFormationBackend.create_change_set

    def execute_change_set(
        self: CloudFormationBackend, change_set_name: str, stack_name: str | None = None
    ) -> None:
        change_set = self.describe_change_set(change_set_name)
        assert change_set is not None  # moto raises for an unknown change set
        stack = self.stacks[change_set.stack_id]
        try:
            original(self, change_set_name, stack_name)
        except Exception as e:  # noqa: BLE001 - whatever moto raised fails the stack, as on AWS
            _fail_stack(stack, change_set, e)
            return
        _follow_launch_template_versions(stack)
        stack._parse_template()
        stack.output_map = stack._create_output_map()
        for name in [n for n, e in self.exports.items() if e.exporting_stack_id == stack.stack_id]:
            del self.exports[name]
        self.exports.update((export.name, export) for export in stack.exports)

    def create_change_set(self: CloudFormationBackend, *args: Any, **kwargs: Any) -> Any:
        change_set_id, stack_id = original_create(self, *args, **kwargs)
        stack = self.stacks[stack_id]
        stack.cross_stack_resources = stack.resource_map.cross_stack_resources = self.exports
        return change_set_id, stack_id

    mp.setattr(CloudFormationBackend, "execute_change_set", execute_change_set)
    mp.setattr(CloudFormationBackend, "create_change_set", create_change_set)


def _follow_launch_template_versions(stack: Stack) -> None:
    """10: each Auto Scaling group of `stack` at the launch template version its template's
    `Version` resolves to now."""
    resources = stack.resource_map
    for logical_id, raw in resources._resource_json_map.items():
        group: Any = resources._parsed_resources.get(logical_id)
        if raw.get("Type") != ASG_TYPE or getattr(group, "ec2_launch_template", None) is None:
            continue
        properties = raw.get("Properties") or {}
        spec = properties.get("LaunchTemplate") or (
            (properties.get("MixedInstancesPolicy") or {}).get("LaunchTemplate") or {}
        ).get("LaunchTemplateSpecification") or {}
        if "Version" not in spec:
            continue
        version = str(parsing.clean_json(spec["Version"], resources))
        if version != str(group.launch_template_version):
            group.launch_template_version = version
            if getattr(group, "provided_launch_template_version", None) is not None:
                group.provided_launch_template_version = version
            mixed = (group.mixed_instances_policy or {}).get("LaunchTemplate", {})
            if "LaunchTemplateSpecification" in mixed:
                mixed["LaunchTemplateSpecification"]["Version"] = version


# --- 3: unknown resource types ----------------------------------------------------------------


@functools.cache
def aws_resource_types(region: str) -> frozenset[str]:
    """The resource types CloudFormation knows in `region` (cfn-lint's copy of its schemas;
    empty without cfn-lint, a test dependency)."""
    try:
        data = importlib.resources.files("cfnlint") / "data/schemas/providers" / f"{region}.json"
        return frozenset(json.loads(data.read_text()))
    except (ModuleNotFoundError, FileNotFoundError):
        return frozenset()


def _unknown_resource_types(mp: Patcher) -> None:
    original = CloudFormationBackend.create_change_set

    def create_change_set(self: CloudFormationBackend, *args: Any, **kwargs: Any) -> Any:
        template = Stack.parse_template(kwargs["template"]) or {}
        known = parsing.get_model_map().keys() | aws_resource_types(self.region_name)
        unknown = sorted({
            str(r.get("Type")) for r in (template.get("Resources") or {}).values()
            if r.get("Type") not in known and r.get("Type") not in parsing.NULL_MODELS
            and not str(r.get("Type")).startswith("Custom::")
        })
        if unknown:
            raise ValidationError(message=(
                f"Template format error: Unrecognized resource types: [{', '.join(unknown)}]"))
        return original(self, *args, **kwargs)

    mp.setattr(CloudFormationBackend, "create_change_set", create_change_set)


# --- 4: termination protection ----------------------------------------------------------------


def _termination_protection(mp: Patcher) -> None:
    def update_termination_protection(self: CloudFormationResponse) -> ActionResult:
        stack = self.cloudformation_backend.get_stack(self._get_param("StackName"))
        stack.enable_termination_protection = self._get_bool_param("EnableTerminationProtection")
        return ActionResult({"StackId": stack.stack_id})

    original = CloudFormationBackend.delete_stack

    def delete_stack(self: CloudFormationBackend, name_or_stack_id: str) -> None:
        for stack in list(self.stacks.values()):
            named = name_or_stack_id in (stack.name, stack.stack_id)
            if named and stack.enable_termination_protection:
                raise ValidationError(message=f"Stack [{stack.name}] cannot be deleted "
                                              "while TerminationProtection is enabled")
        original(self, name_or_stack_id)

    mp.setattr(CloudFormationResponse, "update_termination_protection",
               update_termination_protection, raising=False)
    mp.setattr(CloudFormationBackend, "delete_stack", delete_stack)


# --- 5: launch template versions of instances ------------------------------------------------


def _launched_versions(mp: Patcher) -> None:
    original_init = InstanceState.__init__
    original_property = InstanceState.launch_template

    def init(self: InstanceState, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        group = self.auto_scaling_group
        template = getattr(group, "ec2_launch_template", None)
        self.launched_version = (  # type: ignore[attr-defined]  # an attribute this shim adds
            str(template.get_version(group.launch_template_version).number) if template else None)

    def launch_template(self: InstanceState) -> dict[str, Any] | None:
        spec: dict[str, Any] | None = original_property.fget(self)  # type: ignore[attr-defined]  # mypy sees the getter
        if spec is not None and getattr(self, "launched_version", None):
            spec["Version"] = self.launched_version  # type: ignore[attr-defined]  # set in init
        return spec

    mp.setattr(InstanceState, "__init__", init)
    mp.setattr(InstanceState, "launch_template", property(launch_template))


# --- 6: one CloudFormation request at a time ----------------------------------------------------


def _one_request_at_a_time(mp: Patcher) -> None:
    lock = threading.RLock()  # reentrant: a request may reach the backend's own entry points

    def call_action(self: CloudFormationResponse) -> Any:
        with lock:
            return BaseResponse.call_action(self)

    mp.setattr(CloudFormationResponse, "call_action", call_action, raising=False)


# --- 7: images of other accounts ----------------------------------------------------------------


def _images_of_other_accounts(mp: Patcher) -> None:
    from moto.ec2.models import ec2_backends
    from moto.ec2.models.amis import AmiBackend

    original = AmiBackend.describe_images

    def describe_images(self: Any, ami_ids: list[str] | None = None, filters: Any = None,
                        exec_users: list[str] | None = None, owners: list[str] | None = None,
                        ) -> list[Any]:
        images = original(self, ami_ids=ami_ids, filters=filters, exec_users=exec_users,
                          owners=owners)
        if ami_ids:
            return images
        for account, regions in list(ec2_backends.items()):
            if account == self.account_id or self.region_name not in regions:
                continue
            images += [ami for ami in original(regions[self.region_name], filters=filters,
                                               exec_users=exec_users, owners=owners)
                       if ami.owner_id == account and (
                           ami.is_public or {"UserId": self.account_id} in ami.launch_permissions)]
        return images

    mp.setattr(AmiBackend, "describe_images", describe_images)


# --- 8: load balancer types ------------------------------------------------------------------


def _load_balancer_types(mp: Patcher) -> None:
    from moto.elbv2.models import FakeLoadBalancer, elbv2_backends

    def create_from_cloudformation_json(cls: Any, /, resource_name: str, cloudformation_json: Any,
                                        account_id: str, region_name: str, **kwargs: Any) -> Any:
        properties = cloudformation_json["Properties"]
        return elbv2_backends[account_id][region_name].create_load_balancer(
            resource_name, properties.get("SecurityGroups"), properties.get("Subnets"),
            scheme=properties.get("Scheme", "internet-facing"),
            loadbalancer_type=properties.get("Type", "application"),
            tags=properties.get("Tags"))

    mp.setattr(FakeLoadBalancer, "create_from_cloudformation_json",
               classmethod(create_from_cloudformation_json))


# --- 9: !GetAtt of a sequence ------------------------------------------------------------------


def _get_att_sequences(mp: Patcher) -> None:
    import yaml
    from moto.cloudformation import models, responses, utils

    def tag_constructor(loader: Any, tag: str, node: Any) -> Any:
        if tag == "!GetAtt" and isinstance(node, yaml.SequenceNode):
            return {"Fn::GetAtt": loader.construct_sequence(node)}
        return utils.yaml_tag_constructor(loader, tag, node)

    # moto registers its constructor with PyYAML before each parse, by these modules' names.
    mp.setattr(models, "yaml_tag_constructor", tag_constructor)
    mp.setattr(responses, "yaml_tag_constructor", tag_constructor)
