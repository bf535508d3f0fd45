"""CloudFormation stacks, the engine's `StackBackend`.

Stacks change only through change sets. An update first keeps the deployed bytes of every value
the rendered template encodes differently with the same content (`clmgit.engine.encodings`:
user data gzipped by Go's encoder where clmgit's differs), so that taking over a stack changes
nothing. A template over 51,200 bytes is uploaded to an S3 bucket
(`clmgit-templates-<account>-<region>` unless given) and passed by URL. A dry run creates the
change set, describes it and deletes it again (with the empty stack a CREATE change set makes),
and leaves nothing: a template over the inline limit, which a change set could only read from
S3, is compared with the deployed one by resource instead, so a dry run makes no bucket and
uploads nothing.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import boto3
from botocore.exceptions import ClientError

from clmgit.adapters.aws.session import aws_errors, make_client, stack_missing
from clmgit.engine.clock import Backoff, Clock, SystemClock, wait_until
from clmgit.engine.encodings import keep_deployed_encodings
from clmgit.engine.stacks import (
    Operation,
    ResourceChange,
    StackInfo,
    StackResult,
    StackTemplate,
    diff_resources,
)
from clmgit.errors import ApplyError

TEMPLATE_BODY_LIMIT = 51_200  # bytes; CloudFormation's limit for a template passed inline
CAPABILITIES = ["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"]
STACK_TYPE = "AWS::CloudFormation::Stack"

#: A stack whose creation failed can only be deleted; one in review is an empty shell.
RECREATE = frozenset(
    {"ROLLBACK_COMPLETE", "ROLLBACK_FAILED", "CREATE_FAILED", "REVIEW_IN_PROGRESS"})
#: States only a human can resolve.
STUCK = frozenset({"UPDATE_ROLLBACK_FAILED", "DELETE_FAILED", "IMPORT_ROLLBACK_FAILED"})
SUCCEEDED = frozenset({"CREATE_COMPLETE", "UPDATE_COMPLETE"})
NO_CHANGES = ("didn't contain changes", "No updates are to be performed")

STACK_BACKOFF = Backoff(initial=5, factor=1.5, maximum=30, timeout=3600)


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
        deployed = ""
        if current is not None:
            deployed = self._deployed_body(current)
            stack = replace(stack, body=keep_deployed_encodings(stack.body, deployed))
            if stack.body == deployed and dict(current.tags) == dict(stack.tags):
                # A change set could only say "no changes" (clmgit passes no parameters), so
                # none is made — and a large template is not uploaded for it.
                return self._no_change(stack, current, dry_run=dry_run)
        if dry_run and not _inline(stack.body):
            return self._compared(stack, current, deployed)
        change_set = self._create_change_set(stack, operation)
        described = self._await_change_set(change_set)
        if described["Status"] == "FAILED":
            return self._unchanged(stack, current, change_set, described, dry_run=dry_run)
        changes = self._changes(change_set)
        if dry_run:
            self._discard(stack.name, change_set, operation)
            outputs = current.outputs if current else {}
            return StackResult(stack.name, operation, outputs, changes, dry_run=True)
        if stack.stack_policy and current is not None:
            self._discard(stack.name, change_set, operation)
            final = self._update_under_policy(stack)
        else:
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
            StackInfo(s.name, s.tags, s.status, s.reason)
            for s in stacks
            if s.status != "DELETE_COMPLETE" and all(s.tags.get(k) == v for k, v in tags.items())
        ]

    def stack_tags(self, name: str) -> Mapping[str, str] | None:
        current = self._describe(name)
        return None if current is None or current.status == "DELETE_COMPLETE" else current.tags

    # --- stacks ---

    def _describe(self, name_or_id: str) -> _Stack | None:
        with aws_errors(f"describing stack {name_or_id}"):
            try:
                raw = self._cf.describe_stacks(StackName=name_or_id)["Stacks"]
            except ClientError as e:
                if stack_missing(e):
                    return None
                raise
        return _Stack.from_api(raw[0]) if raw else None

    def _deployed_body(self, stack: _Stack) -> str:
        """The template the stack runs (botocore gives a JSON one parsed: written back)."""
        with aws_errors(f"reading the template of stack {stack.name}"):
            body = self._cf.get_template(StackName=stack.id, TemplateStage="Original")
        text = body["TemplateBody"]
        return text if isinstance(text, str) else json.dumps(text)

    def _no_change(self, stack: StackTemplate, current: _Stack, *, dry_run: bool) -> StackResult:
        """The stack stays as it is, but for the termination protection the template asks."""
        if stack.termination_protection and not dry_run:
            self._protect(current)
        return StackResult(stack.name, "none", current.outputs, dry_run=dry_run)

    @staticmethod
    def _compared(stack: StackTemplate, current: _Stack | None, deployed: str) -> StackResult:
        """A dry run's plan for a template over the inline limit: a change set of it needs its
        upload to S3, and a dry run writes nothing, so the templates are compared by resource."""
        changes = diff_resources(deployed, stack.body)
        operation: Operation = ("create" if current is None else "update" if changes
                                else "none")
        return StackResult(stack.name, operation, current.outputs if current else {}, changes,
                           dry_run=True)

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

    def _update_under_policy(self, stack: StackTemplate) -> _Stack:
        """The update, described by its change set, run as CLM runs it: ExecuteChangeSet takes
        no stack policy, so UpdateStack with the policy for this update only
        (StackPolicyDuringUpdateBody); the stack's own policy stays as it was."""
        with aws_errors(f"updating stack {stack.name}"):
            self._cf.update_stack(
                StackName=stack.name, Capabilities=CAPABILITIES,
                Tags=_tags(stack),
                StackPolicyDuringUpdateBody=stack.stack_policy,
                **self._template_source(stack.name, stack.body),
            )
        return self._finished(stack.name)

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
                Tags=_tags(stack),
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
        return self._no_change(stack, current, dry_run=dry_run)

    def _discard(self, name: str, change_set: str, operation: Operation) -> None:
        with aws_errors(f"deleting a change set of stack {name}"):
            self._cf.delete_change_set(ChangeSetName=change_set)
            if operation == "create":
                # A CREATE change set made an empty stack in REVIEW_IN_PROGRESS; leave nothing.
                self._cf.delete_stack(StackName=name)

    def _execute(self, name: str, change_set: str) -> _Stack:
        with aws_errors(f"executing the change set of stack {name}"):
            self._cf.execute_change_set(ChangeSetName=change_set)
        return self._finished(name)

    def _finished(self, name: str) -> _Stack:
        """The stack once its operation is over; an error unless it succeeded."""
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
        if _inline(body):
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


def _tags(stack: StackTemplate) -> list[dict[str, str]]:
    return [{"Key": k, "Value": v} for k, v in sorted(stack.tags.items())]


def _inline(body: str) -> bool:
    """Whether CloudFormation takes the template inline (else by S3 URL)."""
    return len(body.encode()) <= TEMPLATE_BODY_LIMIT
