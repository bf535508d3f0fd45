"""`clmgit convert --check` counts the templates that rendered content for at least one cluster,
makes variants of the clusters to reach those behind config items, and refuses below 100 %
unless `--allow-uncovered`: through the real command line, on a small CLM repository."""

from __future__ import annotations

import json

import pytest
from clmgit_sandbox.configrepo import ConfigRepoBuilder

from clmgit.convert.compared import Item, compared_items, field_items
from clmgit.convert.parser import parse
from tests.helpers.cli import Result, run_cli

DEFAULTS = (
    "feature: \"off\"\n"
    "outer: \"off\"\n"
    "inner: \"off\"\n"
    "opa: \"false\"\n"
)
FILES = {
    "cluster/cluster.yaml": "Description: {{ .Cluster.ID }}\n",
    "cluster/config-defaults.yaml": DEFAULTS,
    "cluster/manifests/plain/cm.yaml": "kind: ConfigMap\nname: {{ .Cluster.Alias }}\n",
    # one setting turns it on
    "cluster/manifests/feature/cm.yaml": (
        "{{ if eq .Cluster.ConfigItems.feature \"on\" }}\nkind: ConfigMap\n{{ end }}\n"),
    # two settings, neither alone: the pair search
    "cluster/manifests/nested/cm.yaml": (
        "# nested\n{{- if eq .Cluster.ConfigItems.outer \"yes\" }}\n"
        "{{- if ne .Cluster.ConfigItems.inner \"off\" }}\nkind: Secret\n{{- end }}\n"
        "{{- end }}\n"),
    # an item only a registry would hold, read once the gate is open
    "cluster/manifests/opa/cm.yaml": (
        "{{ if eq .Cluster.ConfigItems.opa \"true\" }}\n"
        "url: {{ .Cluster.ConfigItems.opa_url }}\n{{ end }}\n"),
    # a node pool's own item: set on the pools
    "cluster/node-pools/worker-default/stack.yaml": (
        "# {{ .NodePool.Name }}\n"
        "{{- if index .NodePool.ConfigItems \"scaling_priority\" }}\n"
        "Priority: {{ .NodePool.ConfigItems.scaling_priority }}\n{{- end }}\n"),
}
#: No config item can satisfy it: the file stays at comments for every cluster.
UNREACHABLE = {"cluster/manifests/never/cm.yaml": (
    "# only a comment\n{{ if and (eq .Cluster.ConfigItems.feature \"a\") "
    "(eq .Cluster.ConfigItems.feature \"b\") }}\nkind: ConfigMap\n{{ end }}\n")}


def clm(tmp_path_factory: pytest.TempPathFactory, files: dict[str, str]) -> ConfigRepoBuilder:
    b = ConfigRepoBuilder(tmp_path_factory.mktemp("clm") / "clm")
    b.commit("dev", files, "Add the cluster config")
    b.add_origin()
    return b


def check(b: ConfigRepoBuilder, *args: str) -> Result:
    return run_cli("--repo", str(b.path), "convert", "--from", "dev", "--check", "--ec2",
                   "offline", *args)


def test_variants_reach_every_template_behind_config_items(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    b = clm(tmp_path_factory, FILES)
    result = check(b, "--output", "json")
    assert result.code == 0, result.err
    report = json.loads(result.out)["items"][0]
    assert report["written"] is True
    coverage = report["check"]["coverage"]
    assert coverage == {"files": 7, "reached": 7, "percent": 100.0, "uncovered": []}
    variants = report["check"]["variants"]
    settings: dict[str, str] = {}
    for v in variants:
        settings.update(v["sets"])
    assert settings["Cluster.ConfigItems.feature"] == "on"
    assert settings["Cluster.ConfigItems.outer"] == "yes"
    assert settings["Cluster.ConfigItems.inner"] != "off"
    assert settings["Cluster.ConfigItems.opa"] == "true"
    assert settings["Cluster.ConfigItems.opa_url"] == "sample-opa_url"
    assert settings["NodePool.ConfigItems.scaling_priority"] in ("true", "false")
    # the settings agree with one another: one variant holds them all
    assert len(variants) == 1
    assert report["check"]["clusters"][-1] == variants[0]["cluster"]


def test_a_template_no_variant_reaches_is_uncovered_and_refused(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    b = clm(tmp_path_factory, {**FILES, **UNREACHABLE})
    result = check(b)
    assert result.code == 1
    assert "coverage: 7 of 8 templates rendered content (87.5 %), uncovered:\n" \
           "    cluster/manifests/never/cm.yaml\n" in result.out
    assert "all byte-identical" in result.out and "(not written)" in result.out
    err = result.err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "1 template(s) rendered nothing but comments" in err and "--allow-uncovered" in err
    assert "nothing was written" in err
    assert b.git("branch", "--list", "dev-jinja") == ""


def test_allow_uncovered_passes_and_still_lists_the_file(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    b = clm(tmp_path_factory, {**FILES, **UNREACHABLE})
    result = check(b, "--allow-uncovered", "--output", "json")
    assert result.code == 0, result.err
    report = json.loads(result.out)["items"][0]
    assert report["written"] is True and b.sha("dev-jinja")
    assert report["check"]["coverage"]["uncovered"] == ["cluster/manifests/never/cm.yaml"]
    assert report["check"]["coverage"]["percent"] == 87.5


def test_a_setting_that_breaks_another_template_is_not_used(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    # `mode: fancy` turns one file on and makes another fail in Go: no registry holds it for
    # this tree, so no variant sets it, and the file it would turn on stays uncovered.
    b = clm(tmp_path_factory, {
        **FILES, "cluster/config-defaults.yaml": DEFAULTS + "mode: plain\n",
        "cluster/manifests/mode/on.yaml": (
            "{{ if eq .Cluster.ConfigItems.mode \"fancy\" }}\nkind: ConfigMap\n{{ end }}\n"),
        "cluster/manifests/mode/breaks.yaml": (
            "kind: ConfigMap\n{{ if eq .Cluster.ConfigItems.mode \"fancy\" }}"
            "{{ index (split \"a,b\" \",\") 5 }}{{ end }}\n")})
    result = check(b, "--output", "json")
    assert result.code == 1
    report = json.loads(result.out)["items"][0]
    assert report["check"]["identical"] is True
    assert report["check"]["coverage"]["uncovered"] == ["cluster/manifests/mode/on.yaml"]
    assert all("Cluster.ConfigItems.mode" not in v["sets"] for v in report["check"]["variants"])
    assert report["check"]["settings_left_out"] == ["Cluster.ConfigItems.mode=fancy"]
    table = check(b, "--allow-uncovered").out
    assert "settings no variant has, CLM's original fails with them: " \
           "Cluster.ConfigItems.mode=fancy\n" in table


def test_every_value_compared_with_is_set_by_some_variant(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    # The file renders content with the default already; each other constant it is compared
    # with takes a variant, and settings of different items share one.
    b = clm(tmp_path_factory, {
        **FILES, "cluster/config-defaults.yaml": DEFAULTS + "dns: c\nlevel: low\n",
        "cluster/manifests/dns/cm.yaml": (
            "kind: ConfigMap\n"
            "dns: {{ if eq .Cluster.ConfigItems.dns \"a\" }}A"
            "{{ else if eq .Cluster.ConfigItems.dns \"b\" }}B{{ else }}C{{ end }}\n"
            "level: {{ if ne .Cluster.ConfigItems.level \"high\" }}normal{{ end }}\n")})
    result = check(b, "--output", "json")
    assert result.code == 0, result.err
    variants = json.loads(result.out)["items"][0]["check"]["variants"]
    dns = sorted(v["sets"].get("Cluster.ConfigItems.dns", "") for v in variants)
    assert dns == ["", "a", "b"]  # the variant that reaches the files, then a and b
    level = [v["sets"].get("Cluster.ConfigItems.level") for v in variants]
    assert level.count("high") == 1 and len(variants) == 3


def test_the_scan_finds_items_and_the_values_compared_with() -> None:
    tree = parse(
        "{{ $data := . }}{{ if eq .Cluster.ConfigItems.a \"x\" \"y\" }}{{ end }}"
        "{{ if ne (index .NodePool.ConfigItems \"b\") \"off\" }}{{ end }}"
        "{{ if and $data.Cluster.ConfigItems.c (not (eq $.Cluster.ConfigItems.d \"z\")) }}"
        "{{ end }}{{ with index .Cluster.ConfigItems \"e\" }}{{ end }}"
        "{{ .Cluster.ConfigItems.f }}{{ index .Cluster.ConfigItems \"g\" }}", "t.yaml")
    found = compared_items([tree])
    assert found == {
        Item("Cluster", "a"): ("x", "y"),
        Item("NodePool", "b"): ("false", "off", "true"),
        Item("Cluster", "c"): ("false", "true"),
        Item("Cluster", "d"): ("z",),
        Item("Cluster", "e"): ("false", "true"),
    }
    assert field_items([tree]) == {Item("Cluster", "a"), Item("Cluster", "c"),
                                   Item("Cluster", "d"), Item("Cluster", "f")}
