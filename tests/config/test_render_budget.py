"""A render budget: a template that loops 10¹⁰ times or writes without end stops within its
limit and fails its cluster with one sentence naming the template and the limit — through
`clmgit render` (exit 1) and `clmgit reconcile` (the cluster fails, exit 4)."""

from __future__ import annotations

import time

import pytest

from tests.helpers.fleet import Fleet

LOOP = "cluster/manifests/loop/loop.yaml"
#: 10¹⁰ steps: the sandbox's `range` stops at 10⁵ items, nesting does not.
FOREVER = ("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"
           "kind: ConfigMap\n")
#: A gigabyte of output, written ten bytes at a time.
GIGABYTE = ("{% for a in range(100000) %}{% for b in range(1000) %}0123456789"
            "{% endfor %}{% endfor %}")
TEMPLATE_TIME = ("error: cluster/manifests/loop/loop.yaml: rendering stopped: it took longer than "
                 "0.5 s, the limit per template (CLMGIT_RENDER_TEMPLATE_SECONDS)\n")


def _render(fleet: Fleet, template: str) -> tuple[int, str, float]:
    fleet.builder.commit("dev", {LOOP: template}, "A template without end")
    started = time.monotonic()
    r = fleet.cli("render", "--cluster", "dev-1")
    return r.code, r.err, time.monotonic() - started


@pytest.mark.parametrize(("variable", "limit", "template", "sentence"), [
    ("CLMGIT_RENDER_TEMPLATE_SECONDS", "0.5", FOREVER, TEMPLATE_TIME),
    ("CLMGIT_RENDER_CLUSTER_SECONDS", "0.5", FOREVER,
     f"error: {LOOP}: rendering stopped: it ran past 0.5 s, the limit for the templates of "
     "one cluster (CLMGIT_RENDER_CLUSTER_SECONDS)\n"),
    ("CLMGIT_RENDER_TEMPLATE_BYTES", "1000000", GIGABYTE,
     f"error: {LOOP}: rendering stopped: it wrote more than 1000000 bytes, the limit per "
     "template (CLMGIT_RENDER_TEMPLATE_BYTES)\n"),
], ids=["loop-per-template", "loop-per-cluster", "gigabyte-per-template"])
def test_a_template_without_end_stops_at_its_limit(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch, variable: str, limit: str, template: str,
    sentence: str
) -> None:
    monkeypatch.setenv(variable, limit)
    code, err, took = _render(fleet, template)
    assert (code, err) == (1, sentence)
    assert took < 10  # the render itself, and the rest of the command


def test_a_sibling_hashed_by_manifest_hash_is_named_when_it_stops(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLMGIT_RENDER_TEMPLATE_SECONDS", "0.5")
    fleet.builder.commit("dev", {
        "cluster/manifests/loop/deployment.yaml":
            "kind: Deployment\nmetadata: {name: x, annotations: "
            "{h: '{{ manifest_hash(\"loop.yaml\") }}'}}\napiVersion: apps/v1\n",
    }, "A deployment that hashes its config")
    code, err, _ = _render(fleet, FOREVER)
    assert (code, err) == (1, TEMPLATE_TIME)


def test_a_bad_limit_is_one_sentence(fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLMGIT_RENDER_TEMPLATE_BYTES", "ten")
    r = fleet.cli("render", "--cluster", "dev-1")
    assert (r.code, r.err) == (1, "error: CLMGIT_RENDER_TEMPLATE_BYTES='ten': it must be a whole "
                                  "number of bytes above 0\n")


def test_renders_within_the_budget_are_whole_and_not_stopped_later(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Output is collected in batches: all of it arrives, in order; and a render that ended
    is not stopped afterwards by its deadline."""
    monkeypatch.setenv("CLMGIT_RENDER_TEMPLATE_SECONDS", "0.5")
    many = "".join(f"  k{i}: v{i}\n" for i in range(2000))
    fleet.builder.commit("dev", {LOOP: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\n"
                                       "data:\n{% for i in range(2000) %}  k{{ i }}: v{{ i }}\n"
                                       "{% endfor %}"}, "A long template")
    first = fleet.cli("render", "--cluster", "dev-1")
    assert first.code == 0, first.err
    assert many.replace("  ", "    ") in first.out or many in first.out
    time.sleep(0.6)  # past the deadline of every render above: nothing may be raised now
    second = fleet.cli("render", "--cluster", "dev-1")
    assert (second.code, second.out) == (0, first.out)


def test_reconcile_fails_the_cluster_with_the_sentence(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch, moto_endpoint: str
) -> None:
    monkeypatch.setenv("CLMGIT_RENDER_TEMPLATE_SECONDS", "0.5")
    fleet.builder.commit("dev", {LOOP: FOREVER}, "A template without end")
    r = fleet.cli("reconcile", "--cluster", "dev-1", "--output", "json", "--token", "never-used")
    assert r.code == 4, r.err
    assert "rendering stopped: it took longer than 0.5 s" in r.out
    assert "rendering stopped: it took longer than 0.5 s" in fleet.file("clusters.yaml")


@pytest.mark.parametrize(("template", "why"), [
    ("{{ 'x' * 10**10 }}", "would make a value of 10000000000 items at once, more than the limit "
                           "per template (CLMGIT_RENDER_TEMPLATE_BYTES)"),
    ("{{ [1] * 10**10 }}", "would make a value of 10000000000 items at once"),
    ("{{ 2 ** 100000000 }}", "would compute a number of more than 65536 bits"),
], ids=["string", "list", "power"])
def test_a_huge_value_built_at_once_is_refused_before_it_is_built(
    fleet: Fleet, template: str, why: str
) -> None:
    code, err, took = _render(fleet, template)
    assert code == 1 and err.startswith(f"error: {LOOP}: rendering stopped: it {why}")
    assert took < 10


def test_ordinary_products_and_powers_render(fleet: Fleet) -> None:
    code, err, _ = _render(fleet, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\n"
                                  "data: {a: '{{ 3 * 4 }}', b: '{{ \"ab\" * 2 }}', "
                                  "c: '{{ 2 ** 10 }}', d: '{{ 1.5 * 2 }}'}\n")
    assert code == 0, err
    r = fleet.cli("render", "--cluster", "dev-1")
    assert "a: '12'" in r.out and "b: abab" in r.out and "c: '1024'" in r.out
    assert "d: '3.0'" in r.out
