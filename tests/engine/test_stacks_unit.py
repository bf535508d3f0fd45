"""The stack order, tags, outputs and deletions of `apply_stacks` and `decommission_stacks`, on the
in-memory `FakeStacks`."""

from __future__ import annotations

from typing import Any

import pytest
from clmgit_sandbox.doubles import FakeStack, FakeStacks

from clmgit.config.deletions import Deletion
from clmgit.engine.stacks import (
    TAG_CLUSTER,
    TAG_NODE_POOL,
    TAG_ROLE,
    Outputs,
    RenderedStack,
    Renderer,
    ResourceChange,
    apply_stacks,
    decommission_stacks,
    deletion_stack_names,
    diff_resources,
    main_stack,
    node_pool_stack,
)
from clmgit.errors import ApplyError, ConfigError
from clmgit.layout import CLM_LAYOUT
from clmgit.model import Cluster

CLUSTER = Cluster(id="aws:1:eu-central-1:kube-1", local_id="kube-1", region="eu-central-1")
QUEUE = "Resources:\n  Queue:\n    Type: AWS::SQS::Queue\n"
TOPIC = "Resources:\n  Topic:\n    Type: AWS::SNS::Topic\n"


def fleet(fake: FakeStacks, *pools: str, **kwargs: Any) -> list[str]:
    """Apply a main stack, two cf-manifests stacks given out of order, and `pools`."""
    results = apply_stacks(
        fake, cluster=CLUSTER, main=main_stack(CLUSTER, QUEUE),
        extra=[RenderedStack("zz-extra", QUEUE), RenderedStack("aa-extra", QUEUE)],
        node_pools=[node_pool_stack(CLUSTER, p, QUEUE) for p in pools], **kwargs,
    )
    return [f"{r.operation} {r.name}" for r in results]


def test_stacks_are_applied_main_first_then_extras_by_name_then_node_pools() -> None:
    fake = FakeStacks()

    assert fleet(fake, "workers", "db") == [
        "create kube-1", "create aa-extra", "create zz-extra",
        "create nodepool-workers-kube-1", "create nodepool-db-kube-1",
    ]


def test_every_stack_carries_the_cluster_and_its_role_and_main_is_protected() -> None:
    fake = FakeStacks()
    fleet(fake, "workers")

    assert fake.stacks["kube-1"].tags == {TAG_CLUSTER: CLUSTER.id, TAG_ROLE: "main"}
    assert fake.stacks["aa-extra"].tags == {TAG_CLUSTER: CLUSTER.id, TAG_ROLE: "cf-manifest"}
    assert fake.stacks["nodepool-workers-kube-1"].tags == {
        TAG_CLUSTER: CLUSTER.id, TAG_ROLE: "node-pool", TAG_NODE_POOL: "workers"}
    assert [name for name, s in fake.stacks.items() if s.protected] == ["kube-1"]


def test_later_templates_are_rendered_with_the_outputs_of_earlier_stacks() -> None:
    fake = FakeStacks(outputs={"kube-1": {"Vpc": "vpc-1"}, "aa-extra": {"Role": "arn:role"}})
    seen: dict[str, dict[str, str]] = {}

    def render(name: str) -> Renderer:
        def template(outputs: Outputs) -> str:
            seen[name] = dict(outputs)
            return QUEUE
        return template

    apply_stacks(fake, cluster=CLUSTER, main=main_stack(CLUSTER, render("main")),
                 extra=[RenderedStack("aa-extra", render("extra"))],
                 node_pools=[node_pool_stack(CLUSTER, "workers", render("pool"))])

    assert seen == {"main": {}, "extra": {"Vpc": "vpc-1"},
                    "pool": {"Vpc": "vpc-1", "Role": "arn:role"}}


def test_a_second_run_changes_nothing() -> None:
    fake = FakeStacks()
    fleet(fake, "workers")
    fake.calls.clear()

    assert fleet(fake, "workers") == [
        "none kube-1", "none aa-extra", "none zz-extra", "none nodepool-workers-kube-1"]
    assert fake.calls == []


def test_a_failing_stack_stops_the_run_before_later_stacks() -> None:
    fake = FakeStacks(failures={"aa-extra": "Queue CREATE_FAILED: no"})

    with pytest.raises(ApplyError, match="Queue CREATE_FAILED: no"):
        fleet(fake, "workers")
    assert fake.calls == [("create", "kube-1")]


def test_dry_run_reports_the_changes_and_changes_nothing() -> None:
    fake = FakeStacks()
    fleet(fake)
    fake.calls.clear()

    results = apply_stacks(fake, cluster=CLUSTER, main=main_stack(CLUSTER, TOPIC), dry_run=True)

    assert [(r.operation, r.dry_run) for r in results] == [("update", True)]
    assert results[0].changes == (ResourceChange("Add", "Topic", "AWS::SNS::Topic"),
                                  ResourceChange("Remove", "Queue", "AWS::SQS::Queue"))
    assert fake.calls == [] and fake.stacks["kube-1"].body == QUEUE


def test_removed_pools_are_handed_over_for_draining_then_deleted() -> None:
    fake = FakeStacks()
    fleet(fake, "workers", "old")
    fake.calls.clear()
    events: list[str] = []

    def drain(pool: str) -> None:
        events.append(f"drain {pool}, stack there: {'nodepool-old-kube-1' in fake.stacks}")

    fleet(fake, "workers", on_pool_removed=drain)

    assert events == ["drain old, stack there: True"]
    assert fake.calls == [("delete", "nodepool-old-kube-1")]


def test_deletions_run_before_and_after_and_a_missing_stack_is_fine() -> None:
    fake = FakeStacks()
    fleet(fake)
    fake.calls.clear()

    applied = fleet(fake, deletions_pre=["aa-extra", "never-was"], deletions_post=["zz-extra"])

    assert applied[:2] == ["delete aa-extra", "none never-was"]
    assert applied[-1] == "delete zz-extra"
    assert fake.calls == [("delete", "aa-extra"), ("create", "aa-extra"), ("delete", "zz-extra")]


def test_a_deletion_of_the_protected_main_stack_is_refused() -> None:
    fake = FakeStacks()
    fleet(fake)

    with pytest.raises(ApplyError, match="termination protection"):
        fleet(fake, deletions_post=["kube-1"])
    assert "kube-1" in fake.stacks


def test_decommission_deletes_pools_then_extras_in_reverse_then_main() -> None:
    fake = FakeStacks()
    fleet(fake, "workers")
    fake.calls.clear()

    results = decommission_stacks(fake, cluster=CLUSTER)

    assert [r.name for r in results] == [
        "nodepool-workers-kube-1", "zz-extra", "aa-extra", "kube-1"]
    assert fake.calls[-2:] == [("unprotect", "kube-1"), ("delete", "kube-1")]
    assert fake.stacks == {}
    assert [r.operation for r in decommission_stacks(fake, cluster=CLUSTER)] == ["none"]


def test_decommission_leaves_other_clusters_alone() -> None:
    fake = FakeStacks()
    fleet(fake)
    other = Cluster(id="aws:1:eu-central-1:kube-2", local_id="kube-2")
    apply_stacks(fake, cluster=other, main=main_stack(other, QUEUE))

    decommission_stacks(fake, cluster=CLUSTER)

    assert list(fake.stacks) == ["kube-2"]


def test_diff_resources_reads_cloudformation_short_forms_and_json() -> None:
    old = "Resources:\n  A: {Type: T1, Properties: {X: !Ref B, Y: !GetAtt B.Arn}}\n" \
        "  B: {Type: T2}\n"
    same = '{"Resources": {"A": {"Type": "T1", "Properties": {"X": {"Ref": "B"}, ' \
        '"Y": {"Fn::GetAtt": ["B", "Arn"]}}}, "B": {"Type": "T2"}}}'
    new = '{"Resources": {"A": {"Type": "T1", "Properties": {"X": {"Ref": "C"}}}}}'

    assert diff_resources(old, same) == ()
    assert diff_resources(old, new) == (ResourceChange("Modify", "A", "T1"),
                                        ResourceChange("Remove", "B", "T2"))
    with pytest.raises(ApplyError, match=r"the template:\d+: the rendered YAML is malformed"):
        diff_resources("", "Resources: [")


# --- cf-deletions.yaml: only the cluster's own stacks ---------------------------------------

OTHER = Cluster(id="aws:1:eu-central-1:kube-2", local_id="kube-2", region="eu-central-1")
WHERE = "cluster/cf-deletions.yaml: post_apply[0]"


def by_labels(**labels: str) -> Deletion:
    return Deletion("Stack", labels=labels, where=WHERE)


def test_a_labels_deletion_finds_only_the_clusters_stacks() -> None:
    fake = FakeStacks()
    fleet(fake)
    apply_stacks(fake, cluster=OTHER, main=main_stack(OTHER, QUEUE),
                 extra=[RenderedStack("logs-kube-2", QUEUE)])

    names = deletion_stack_names(fake, [by_labels(**{TAG_ROLE: "cf-manifest"})], cluster=CLUSTER)

    assert names == ["aa-extra", "zz-extra"]


@pytest.mark.parametrize("labels", [{TAG_CLUSTER: OTHER.id},
                                    {TAG_CLUSTER: OTHER.id, TAG_ROLE: "cf-manifest"}])
def test_labels_of_another_cluster_are_refused_naming_the_entry(labels: dict[str, str]) -> None:
    with pytest.raises(ConfigError) as e:
        deletion_stack_names(FakeStacks(), [by_labels(**labels)], cluster=CLUSTER)
    assert str(e.value) == (
        f"{WHERE}: its labels select stacks of another cluster ({TAG_CLUSTER}: {OTHER.id}); "
        f"a deletion only deletes stacks of cluster {CLUSTER.id}")


def test_a_name_deletion_reaches_an_untagged_stack_but_not_another_clusters() -> None:
    fake = FakeStacks()
    fake.stacks["legacy"] = FakeStack(QUEUE, {})
    fake.stacks["logs-kube-2"] = FakeStack(QUEUE, {TAG_CLUSTER: OTHER.id})
    named = [Deletion("Stack", name=n, where=WHERE) for n in ("legacy", "never-was")]

    assert deletion_stack_names(fake, named, cluster=CLUSTER) == ["legacy", "never-was"]
    with pytest.raises(ConfigError, match="stack logs-kube-2 is one of another cluster"):
        deletion_stack_names(fake, [Deletion("Stack", name="logs-kube-2", where=WHERE)],
                             cluster=CLUSTER)


def test_in_clms_layout_an_eks_clusters_stacks_are_found_by_alias_and_by_id() -> None:
    eks = Cluster(id="aws:1:eu-central-1:kube-3", local_id="kube-3", alias="shop",
                  region="eu-central-1", provider="zalando-eks")
    fake = FakeStacks()
    role = {"role": "old"}
    fake.stacks["by-alias"] = FakeStack(QUEUE, {"kubernetes.io/cluster/shop": "owned", **role})
    fake.stacks["by-id"] = FakeStack(QUEUE, {f"kubernetes.io/cluster/{eks.id}": "owned", **role})
    fake.stacks["other"] = FakeStack(QUEUE, {"kubernetes.io/cluster/shop-2": "owned", **role})

    names = deletion_stack_names(fake, [by_labels(**role)], cluster=eks, layout=CLM_LAYOUT)

    assert names == ["by-alias", "by-id"]
    with pytest.raises(ConfigError, match=r"\(kubernetes.io/cluster/shop-2: owned\)"):
        deletion_stack_names(fake, [Deletion("Stack", name="other", where=WHERE)], cluster=eks,
                             layout=CLM_LAYOUT)
