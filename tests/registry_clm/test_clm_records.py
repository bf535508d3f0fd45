"""Registry records read, hashed and written as CLM reads, hashes and writes them.

The expected versions come from two places: CLM's vectors (`tests/data/clm-hash-vectors.json`,
measured by running CLM's own `api.Cluster.Version`), and, for this project's own records, a
reference encoder written here from CLM's byte layout (api/cluster.go) over the values CLM's
decoders produce — the table of each record states those values explicitly, so the parser under
test is checked against what yaml.v2 / encoding/json make of the record, not against itself.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from clmgit.errors import ClmgitError
from clmgit.model import Cluster, desired_version, parse_cluster
from clmgit.registry.file import FileRegistry
from clmgit.registry.records import check_registry
from tests.helpers.clm_records import BASE, OWN, SHA, clm_version, decoded, own_record
from tests.helpers.data import data_json

VECTORS = data_json("clm-hash-vectors.json")["vectors"]



# --- the reference: CLM's Version over CLM's decoded struct --------------------------------------


def test_the_reference_encoder_agrees_with_clm_on_the_shared_vectors():
    for v in VECTORS:
        go = decoded(v["record"])
        assert clm_version(v["sha"], go) == v["clm_version"], v["name"]


# --- the shared vectors, both paths --------------------------------------------------------------


def json_path(record: dict[str, Any]) -> Cluster:
    """The HTTP registry's path: the record as JSON on the wire, parsed and checked."""
    [cluster] = check_registry([parse_cluster(json.loads(json.dumps(record)), "http")], "http")
    return cluster


def file_path(tmp_path: Path, record: dict[str, Any]) -> Any:
    """The file registry's path: a YAML dump of the record in a clusters.yaml."""
    path = tmp_path / "clusters.yaml"
    path.write_text(yaml.safe_dump({"clusters": [record]}, allow_unicode=True, sort_keys=False))
    [cluster] = FileRegistry(path).clusters()
    return cluster


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_shared_vectors_on_both_paths(vector, tmp_path):
    assert desired_version(vector["sha"], json_path(vector["record"])) == vector["clm_version"]
    expected = vector["clm_version_file_registry"]
    if expected is None:
        with pytest.raises(ClmgitError):
            file_path(tmp_path, vector["record"])
    else:
        assert desired_version(vector["sha"], file_path(tmp_path, vector["record"])) == expected


# --- this project's records: ≥ 40, both paths -----------------------------------------------------

def test_there_are_at_least_forty_own_records():
    assert len(OWN) >= 40


@pytest.mark.parametrize("name", sorted(OWN))
def test_own_records_on_both_paths(name, tmp_path):
    record = own_record(name)
    expected = clm_version(SHA, decoded(record))
    assert desired_version(SHA, json_path(record)) == expected
    assert desired_version(SHA, file_path(tmp_path, record)) == expected


def test_a_lone_surrogate_in_json_hashes_as_u_fffd_and_does_not_crash():
    wire = json.dumps(BASE).replace('"platform"', '"plat\\ud800form"')
    cluster = parse_cluster(json.loads(wire), "http")
    assert cluster.config_items["team"] == "plat\ufffdform"
    go = decoded(BASE)
    go["config_items"]["team"] = "plat\ufffdform"
    assert desired_version(SHA, cluster) == clm_version(SHA, go)


# --- scalars as written: yaml.v2 into string fields ----------------------------------------------

# (as written in clusters.yaml, what yaml.v2 puts into a Go string field). yaml.v2's decoder sets
# a string field to the scalar's text whenever the scalar resolves to anything but null.
SCALARS = [
    ("1.20", "1.20"),  # a float to YAML 1.1, 1.2 to PyYAML
    ("0755", "0755"),  # octal 493 to YAML 1.1
    ("0x1F", "0x1F"),
    ("1_000", "1_000"),
    ("yes", "yes"),
    ("on", "on"),
    ("No", "No"),
    ("true", "true"),
    ("1:30", "1:30"),  # sexagesimal 90 to YAML 1.1
    ("2021-01-01", "2021-01-01"),
    ("2021-01-01 10:00:00+02:00", "2021-01-01 10:00:00+02:00"),
    ("1e3", "1e3"),
    (".inf", ".inf"),
    ("-0", "-0"),
    ("'quoted 1.20'", "quoted 1.20"),
    ('"yes"', "yes"),
    ("~", ""),
    ("null", ""),
    ("", ""),
    ("plain text", "plain text"),
]


def _file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "clusters.yaml"
    path.write_text("clusters:\n" + body)
    return path


RECORD_HEAD = """\
- id: aws:1:eu-central-1:c
  api_server_url: https://c.example.org
  channel: {channel}
  config_items:
    value: {value}
    {value}: as-key
  node_pools:
  - name: {name}
    profile: worker-default
    instance_types: [{value}]
"""


@pytest.mark.parametrize(("written", "expected"), SCALARS, ids=[s[0] or "empty" for s in SCALARS])
def test_scalars_are_read_as_written_like_yaml_v2(written, expected, tmp_path):
    value = written or "''"
    name = value if expected else "pool"  # a pool needs a name (clmgit's rule)
    text = RECORD_HEAD.format(channel=value, value=value, name=name)
    [c] = FileRegistry(_file(tmp_path, text)).clusters()
    assert c.channel == expected
    assert c.config_items["value"] == expected
    assert c.config_items[expected] == "as-key"
    assert c.node_pools[0].name == (expected or "pool")
    assert c.node_pools[0].instance_types == (expected,)


def test_a_lease_reads_the_record_with_the_same_scalars(tmp_path):
    text = RECORD_HEAD.format(channel="1.20", value="0755", name="p")
    reg = FileRegistry(_file(tmp_path, text))
    fresh = reg.acquire("aws:1:eu-central-1:c", "me", 60)
    assert fresh is not None and fresh == reg.clusters()[0]
    assert (fresh.channel, fresh.config_items["value"]) == ("1.20", "0755")


def test_integer_fields_take_yaml_numbers_and_refuse_strings(tmp_path):
    ok = RECORD_HEAD.format(channel="a", value="b", name="p") + "  criticality_level: 0x10\n"
    assert FileRegistry(_file(tmp_path, ok)).clusters()[0].criticality_level == 16
    bad = RECORD_HEAD.format(channel="a", value="b", name="p") + "  criticality_level: '3'\n"
    with pytest.raises(ClmgitError, match="criticality_level must be a whole number"):
        FileRegistry(_file(tmp_path, bad)).clusters()


# --- CLM's acceptance rules ----------------------------------------------------------------------


def test_a_pool_without_instance_types_is_refused_with_clms_reason():
    record = own_record("base")
    record["node_pools"][0]["instance_types"] = []
    with pytest.raises(ClmgitError, match="no instance types for cluster .*kube-9, pool worker"):
        json_path(record)


@pytest.mark.parametrize("url", ["", "https://localhost/", "not a url"])
def test_an_api_server_url_without_a_dotted_host_is_refused(url):
    with pytest.raises(ClmgitError, match="can't derive hosted zone from URL"):
        json_path({**own_record("base"), "api_server_url": url})


# --- through the real CLI: the registry is checked as a whole, exit 1 -----------------------------


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "clmgit", *args], capture_output=True,
                          text=True, timeout=120, check=False)


def _registry_file(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / "clusters.yaml"
    path.write_text(yaml.safe_dump({"clusters": records}, sort_keys=False))
    return path


def _two(**second: Any) -> list[dict[str, Any]]:
    a = own_record("base")
    b = copy.deepcopy(a)
    b.update(id="aws:123456789012:eu-central-1:kube-10", alias="kube-10", local_id="kube-10",
             api_server_url="https://kube-10.foo.example.org/")
    b.update(second)
    return [a, b]


@pytest.mark.parametrize(("records", "words"), [
    (_two(id=BASE["id"]), ["same id", BASE["id"]]),
    (_two(alias="kube-9"), ["same alias", "kube-9"]),
    (_two(local_id="kube-9"), ["same infrastructure_account and local_id", "kube-9"]),
    (_two(alias=BASE["id"]), ["alias", BASE["id"]]),
    (_two(api_server_url="HTTPS://Kube-9.FOO.example.org:443"),
     ["same api_server_url", "https://kube-9.foo.example.org", "kube-10"]),
    (_two(node_pools=5), ["kube-10", "node_pools must be a list"]),
    (_two(alias=["x"]), ["kube-10", "alias must be a string"]),
    (_two(channel={"a": 1}), ["kube-10", "channel must be a string"]),
    (_two(config_items={"team": ["x"]}), ["kube-10", "config_items.team must be a string"]),
    (_two(criticality_level="high"), ["kube-10", "criticality_level must be a whole number"]),
], ids=["dup-id", "dup-alias", "dup-account-local-id", "alias-is-another-id", "dup-api-server",
        "node_pools-5", "alias-list", "channel-mapping", "selector-item-list",
        "criticality-string"])
def test_a_bad_registry_exits_1_naming_record_and_field(records, words, tmp_path):
    result = cli("registry", "export", "--registry", str(_registry_file(tmp_path, records)))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr


def test_a_file_without_a_clusters_list_exits_1(tmp_path):
    channel = tmp_path / "beta.yaml"
    channel.write_text("channel: beta\nbranch: beta\n")
    result = cli("registry", "export", "--registry", str(channel))
    assert result.returncode == 1
    assert "not a cluster registry" in result.stderr and "clusters:" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_good_registry_exports_through_the_cli(tmp_path):
    result = cli("registry", "export", "--registry", str(_registry_file(tmp_path, _two())))
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(result.stdout)["clusters"][1]["id"].endswith("kube-10")


# --- !!binary items and files of several documents, as yaml.v2 reads them -------------------------

def test_a_binary_item_is_its_decoded_text_and_versioned_so(tmp_path):
    """yaml.v2 puts a `!!binary` scalar's decoded bytes into the string field; CLM hashes them."""
    text = RECORD_HEAD.format(channel="dev", value="x", name="p").replace(
        "    value: x\n", "    value: !!binary aGVsbG8gd29ybGQ=\n    block: !!binary |\n"
                         "      Y2VydA==\n")
    [c] = FileRegistry(_file(tmp_path, text)).clusters()
    assert c.config_items["value"] == "hello world" and c.config_items["block"] == "cert"
    plain = text.replace("!!binary aGVsbG8gd29ybGQ=", "hello world").replace(
        "!!binary |\n      Y2VydA==", "cert")
    (tmp_path / "plain").mkdir()
    [same] = FileRegistry(_file(tmp_path / "plain", plain)).clusters()
    assert desired_version(SHA, c) == desired_version(SHA, same)
    go = decoded({"id": "aws:1:eu-central-1:c", "api_server_url": "https://c.example.org",
                  "channel": "dev", "config_items": {"value": "hello world", "block": "cert",
                                                     "x": "as-key"},
                  "node_pools": [{"name": "p", "profile": "worker-default",
                                  "instance_types": ["x"]}]})
    assert desired_version(SHA, c) == clm_version(SHA, go)


def test_a_binary_item_that_is_not_text_is_refused_in_one_sentence(tmp_path):
    text = RECORD_HEAD.format(channel="dev", value="x", name="p").replace(
        "    value: x\n", "    value: !!binary /w==\n")
    with pytest.raises(ClmgitError, match=r"clusters.yaml: the !!binary value at line 6 is not "
                                          r"UTF-8 text"):
        FileRegistry(_file(tmp_path, text)).clusters()


def test_only_the_first_document_of_a_registry_is_read(tmp_path):
    """yaml.v2's Unmarshal decodes the first document and reads no further."""
    first = RECORD_HEAD.format(channel="dev", value="x", name="p")
    for rest in ("---\nclusters: []\n", "---\nnot: [yaml\n", "...\n---\n- 1\n"):
        [c] = FileRegistry(_file(tmp_path, first + rest)).clusters()
        assert c.id == "aws:1:eu-central-1:c" and c.channel == "dev"
    [same] = FileRegistry(_file(tmp_path, first)).clusters()
    assert desired_version(SHA, c) == desired_version(SHA, same)
