"""Reading and checking a registry as CLM does: scalars as written, and the whole registry at once.

CLM's file registry decodes `clusters.yaml` with yaml.v2 into string fields, and yaml.v2 puts a
scalar's source text into a string field whatever YAML 1.1 would make of it: `1.20` stays
`"1.20"` (not 1.2), `0755` stays `"0755"`, `yes` stays `"yes"`, `1:30` stays `"1:30"`, a date
stays as written; only null (`~`, `null`, nothing) becomes `""`. The loader here hands a string
over as itself, and every other scalar as a `model.Scalar` (its text plus the resolved value);
`model.parse_cluster` takes the text for string fields and the value for integer fields.

`check_registry` then holds the registry as a whole to CLM's acceptance rules (a node pool needs
instance types unless it is a Karpenter pool; a non-EKS cluster's `api_server_url` needs a
dotted host) and to clmgit's safety rules (no two records share an id, an alias, an
infrastructure account and local id, or an API server), before anything reaches a cluster.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from sys import intern
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import yaml

from clmgit import yamlsafe
from clmgit.cache import memo_pickle
from clmgit.errors import RegistryError
from clmgit.machine import collection_paused
from clmgit.model import Cluster, Scalar, is_karpenter, parse_cluster
from clmgit.urls import url_host

_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TAG = "tag:yaml.org,2002:"
_STR, _SEQ, _MAP = f"{_TAG}str", f"{_TAG}seq", f"{_TAG}map"
# Names of their own: the reading below asks for them once per node.
_ScalarNode, _SequenceNode, _MappingNode = yaml.ScalarNode, yaml.SequenceNode, yaml.MappingNode
#: YAML 1.1's scalars that are not strings.
_NOT_STRINGS = ("null", "bool", "int", "float", "timestamp")
#: First characters of a plain scalar that YAML 1.1 may read as something other than a string.
_NOT_ONLY_TEXT = frozenset(_BASE.yaml_implicit_resolvers)


class _WrittenLoader(_BASE):  # type: ignore[misc, valid-type]  # a base chosen at import
    """YAML 1.1 as libyaml parses it, every scalar kept with its text (see the module doc).

    libyaml asks the three methods below about each of the hundreds of thousands of nodes of a
    large registry; they answer what PyYAML's resolver answers for a loader without path
    resolvers (the safe loader has none) without walking its lists: a collection has its
    default tag, a quoted scalar is a string, a plain one is resolved once per text."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._tags: dict[str, str] = {}
        #: Scalars that are not strings, by tag and text: a registry repeats its few numbers.
        self.scalars: dict[tuple[str, str], Any] = {}

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is not _ScalarNode:
            return _SEQ if kind is _SequenceNode else _MAP
        if not implicit[0] or value[:1] not in _NOT_ONLY_TEXT:
            return _STR
        tag = self._tags.get(value)
        if tag is None:
            tag = self._tags[value] = str(super().resolve(kind, value, implicit))
        return tag


assert not _BASE.yaml_path_resolvers  # what `_WrittenLoader` answers holds without them


def _keeping_text(tag: str) -> Callable[[Any, yaml.ScalarNode], Scalar]:
    construct = _BASE.yaml_constructors[f"{_TAG}{tag}"]

    def construct_written(loader: Any, node: yaml.ScalarNode) -> Scalar:
        try:
            resolved = construct(loader, node)
        except (ValueError, OverflowError) as e:  # a timestamp of a 13th month, say
            raise yaml.constructor.ConstructorError(
                None, None, f"not a {tag}: {e}", node.start_mark) from None
        return Scalar("" if resolved is None else node.value, resolved)

    return construct_written


# A string is its own text: it stays a `str`; YAML 1.1's other scalars keep theirs.
for _tag in _NOT_STRINGS:
    _WrittenLoader.add_constructor(f"{_TAG}{_tag}", _keeping_text(_tag))


class _NotText(yaml.YAMLError):
    def __init__(self, mark: Any) -> None:
        super().__init__()
        self.problem_mark = mark


def _binary_text(loader: Any, node: yaml.ScalarNode) -> str:
    """`!!binary`: yaml.v2 puts the decoded bytes into CLM's string field. clmgit keeps them as
    text, so they must be UTF-8 (`_NotText` otherwise)."""
    data = _BASE.yaml_constructors[f"{_TAG}binary"](loader, node)
    try:
        return str(data.decode())
    except UnicodeDecodeError:
        raise _NotText(node.start_mark) from None


_WrittenLoader.add_constructor(f"{_TAG}binary", _binary_text)


def load_written(text: bytes | str, name: str) -> Any:
    """The first YAML document as yaml.v2 reads a registry (any further document is not read):
    strings as `str`, every other scalar as a `Scalar` of its text and YAML 1.1 value; within
    the limits of `clmgit.yamlsafe`; a syntax error names the file and line."""
    yamlsafe.check_size(text, name)
    loader = _WrittenLoader(text)
    try:
        if not loader.check_node():
            return None
        node = loader.get_node()
        if yamlsafe.may_alias(text):
            yamlsafe.check_node(node, name)
        return _data(loader, node)
    except _NotText as e:
        raise RegistryError(f"{name}: the !!binary value at line {e.problem_mark.line + 1} is "
                            "not UTF-8 text, which clmgit cannot carry in a config item; "
                            "write it base64-encoded as a plain string") from None
    except yaml.YAMLError as e:
        raise malformed_yaml(e, name) from None
    finally:
        loader.dispose()


def _data(loader: Any, node: yaml.Node) -> Any:
    """What `loader.construct_document(node)` makes of `node`. Strings, lists and mappings of
    scalar keys — nearly every node of a registry — are built here, several times faster than
    PyYAML's generic constructor; anything else (another scalar, a merge key, a tag of its own,
    a key that is not a scalar) by the loader's constructors, which also word its errors. An
    aliased node is built again where it is repeated: the limits bound that, and nothing
    changes the data afterwards."""
    kind = type(node)
    if kind is _ScalarNode:
        if node.tag == _STR:
            return intern(node.value)
        if node.tag in _KEY_TAGS:  # one of YAML 1.1's: the same text, the same value
            key = (node.tag, node.value)
            made = loader.scalars.get(key)
            if made is None:
                made = loader.scalars[key] = loader.construct_object(node, deep=True)
            return made
    if kind is _SequenceNode and node.tag == _SEQ:
        return [intern(item.value) if type(item) is _ScalarNode and item.tag == _STR
                else _data(loader, item) for item in node.value]
    if kind is _MappingNode and node.tag == _MAP and all(
            type(k) is _ScalarNode and (k.tag == _STR or k.tag in _KEY_TAGS)
            for k, _ in node.value):
        # A string, nearly every key and value, is taken here without a call.
        return {intern(k.value) if k.tag == _STR else _data(loader, k):
                intern(v.value) if type(v) is _ScalarNode and v.tag == _STR
                else _data(loader, v) for k, v in node.value}
    return loader.construct_object(node, deep=True)


#: YAML 1.1's tags of scalars that are not strings: `_data` builds such a key itself, and each
#: text once (a merge `<<` or value `=` key is the constructor's).
_KEY_TAGS = frozenset(f"{_TAG}{t}" for t in _NOT_STRINGS)


def malformed_yaml(e: yaml.YAMLError, name: str) -> RegistryError:
    """The one sentence for a registry file that is not YAML, with the line where known."""
    mark = getattr(e, "problem_mark", None)
    where = f" at line {mark.line + 1}" if mark else ""
    return RegistryError(f"{name}: malformed YAML{where}")


def parse_file(text: bytes | str, name: str, *, keep: bool = True) -> list[Cluster]:
    """Every record of a `clusters.yaml`, read and checked as a whole (`check_registry`).

    The records as checked are cached, keyed by the file's content and by this code
    (`_code_version`): an unchanged registry costs one load of its pickled records (0.1 s at
    10,000 clusters), where reading and checking it takes a couple of seconds. `keep`: the
    caller holds on to the records (`collection_paused`); without it they only fill the cache."""
    raw = text.encode() if isinstance(text, str) else text
    if not raw.strip():
        return []  # an empty file: a registry with no clusters yet
    with collection_paused(keep=keep):
        return memo_pickle(f"registry-clusters-{_code_version()}", raw,
                           lambda: _parse_text(text, name),
                           dump=_with_hashes, load=_load_clusters)


def _load_clusters(data: Any) -> list[Cluster]:
    """Records cached by `parse_file`, as the objects they were; checked before they were
    stored."""
    if type(data) is not list or not all(type(c) is Cluster for c in data):
        raise ValueError("not a list of records")
    return data


def _with_hashes(clusters: list[Cluster]) -> list[Cluster]:
    """The records, each with its version hash computed now, so that it is pickled with the
    record. A fleet repeats its regions, profiles and config items thousands of times: `_data`
    made equal strings one object, so the pickle holds each once."""
    for c in clusters:
        c.version_hash  # noqa: B018 - computed now, so that it is pickled with the record
    return clusters


@functools.cache
def _code_version() -> str:
    """What the cached records depend on besides the file: clmgit's version and the source of
    the reading and checking code (so an edit of either, released or not, reads files anew)."""
    import clmgit
    from clmgit import model

    digest = hashlib.sha256(clmgit.__version__.encode())
    for source in (model.__file__, __file__):
        try:
            digest.update(Path(source or "").read_bytes())
        except OSError:
            pass  # no source beside the bytecode: the version alone
    return digest.hexdigest()[:16]


def _parse_text(text: bytes | str, name: str) -> list[Cluster]:
    data = load_written(text, name)
    if data is None or (isinstance(data, Scalar) and data.resolved is None):
        return []  # an empty file: a registry with no clusters yet
    if not isinstance(data, dict) or "clusters" not in data:
        raise RegistryError(
            f"{name}: not a cluster registry: expected a mapping with a `clusters:` list")
    records = data["clusters"]
    if isinstance(records, Scalar) and records.resolved is None:
        records = []
    if not isinstance(records, list):
        raise RegistryError(f"{name}: `clusters:` must be a list of records")
    for i, record in enumerate(records):
        check_keys(record, f"{name}: cluster #{i + 1}")
    return check_registry(
        [parse_cluster(r, f"{name}: cluster #{i + 1}") for i, r in enumerate(records)], name)


#: The keys of a record and of its node pools that CLM's records have (api/cluster.go,
#: api/node_pool.go): the Cluster Registry API's fields, `owner`, `account_name`, `created_at`.
RECORD_KEYS = frozenset({
    "id", "alias", "infrastructure_account", "region", "local_id", "provider", "api_server_url",
    "channel", "environment", "criticality_level", "lifecycle_status", "owner", "account_name",
    "config_items", "node_pools", "status", "created_at"})
NODE_POOL_KEYS = frozenset({
    "name", "profile", "instance_types", "discount_strategy", "min_size", "max_size",
    "config_items"})


def check_keys(record: Any, where: str) -> None:
    """A key nobody reads is a typo (`chanel:`) that would otherwise be ignored in silence, and
    the cluster would run with the default it meant to change. People write `clusters.yaml`, so
    the file registry refuses it; a server's answers may carry fields of its own."""
    if not isinstance(record, dict):
        return  # parse_cluster says what is wrong with it
    _known(record, RECORD_KEYS, where)
    pools = record.get("node_pools")
    for j, pool in enumerate(pools if isinstance(pools, list) else []):
        if isinstance(pool, dict):
            _known(pool, NODE_POOL_KEYS, f"{where}, node pool #{j + 1}")


def _known(mapping: dict[Any, Any], keys: frozenset[str], where: str) -> None:
    if mapping.keys() <= keys:  # every key known (a string or a Scalar equals its text)
        return
    import difflib

    for key in mapping:
        if str(key) not in keys:
            near = difflib.get_close_matches(str(key), sorted(keys), n=1)
            hint = f"; did you mean {near[0]!r}?" if near else f" (keys: {', '.join(sorted(keys))})"
            raise RegistryError(f"{where}: unknown key {str(key)!r}{hint}")


def check_registry(clusters: list[Cluster], name: str) -> list[Cluster]:
    """`clusters` if every record passes CLM's checks and no two clash; else a RegistryError
    that names the record and the field."""
    for c in clusters:
        check_record(c, name)
    check_names(clusters, name)
    return clusters


def check_names(clusters: list[Cluster], name: str) -> None:
    """clmgit's safety rules: no two records share an id, an alias, an infrastructure
    account and local id, or an API server, and no alias is another record's id (a
    RegistryError names both)."""
    _unique(clusters, name, "id", lambda c: c.id)
    _unique(clusters, name, "alias", lambda c: c.alias or None)
    _unique(clusters, name, "infrastructure_account and local_id",
            lambda c: (c.infrastructure_account, c.local_id) if c.local_id else None)
    # Manifests and deletions go to the API server: a record copied from another cluster
    # with only its id and alias changed would otherwise change that other cluster.
    _unique(clusters, name, "api_server_url", lambda c: api_server_key(c.api_server_url))
    # A name (`reconcile NAME`, a kubeconfig context) is an id or an alias: it must name one.
    ids = {c.id for c in clusters}
    for c in clusters:
        if c.alias and c.alias != c.id and c.alias in ids:
            raise RegistryError(
                f"{name}: the alias of cluster {c.id} is {c.alias}, the id of another cluster; "
                "a name must name one cluster (field alias)")


def check_record(cluster: Cluster, name: str) -> None:
    """What CLM's file registry refuses when it lists a record, with CLM's reason."""
    for pool in cluster.node_pools:
        if not pool.instance_types and not is_karpenter(pool.profile):
            raise RegistryError(
                f"{name}: no instance types for cluster {cluster.id}, pool {pool.name} "
                "(field node_pools[].instance_types)")
    provider = cluster.provider if cluster.written_provider is None else cluster.written_provider
    if provider != "zalando-eks" and "." not in url_host(cluster.api_server_url, port=True):
        raise RegistryError(
            f"{name}: cluster {cluster.id}: can't derive hosted zone from URL "
            f"{cluster.api_server_url!r} (field api_server_url needs a dotted host)")


#: An http(s) URL as nearly every record writes it: scheme, a plain host, a port, a path.
_SIMPLE_URL = re.compile(r"(https?)://([A-Za-z0-9.-]+)(?::([0-9]{1,5}))?(/[!-~]*)?")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def api_server_key(url: str) -> str | None:
    """The API server a URL reaches, for telling records apart: scheme and host in lower case,
    no default port, no trailing slash (None for no URL). `https://Kube-1.example.org:443/`
    and `https://kube-1.example.org` are one server."""
    text = url.strip()
    if not text:
        return None
    simple = _SIMPLE_URL.fullmatch(text)
    if simple:
        scheme, host, port, path = simple.groups()
        scheme = scheme.lower()
    else:
        try:
            parts = urlsplit(text)
            number = parts.port
        except ValueError:
            return text  # not a URL: told apart as written
        if not (parts.scheme and parts.hostname):
            return text
        scheme, path = parts.scheme.lower(), parts.path
        host = parts.hostname or ""
        host = f"[{host}]" if ":" in host else host
        port = None if number is None else str(number)
        path = urlunsplit(("", "", path, parts.query, ""))
    if port is not None and int(port) != _DEFAULT_PORTS.get(scheme):
        host = f"{host}:{int(port)}"
    return f"{scheme}://{host.lower()}{(path or '').rstrip('/')}"


def _unique(clusters: Iterable[Cluster], name: str, field: str, key: Any) -> None:
    seen: dict[Any, str] = {}
    for c in clusters:
        value = key(c)
        if value is None:
            continue
        if value in seen:
            shown = " / ".join(value) if isinstance(value, tuple) else value
            raise RegistryError(
                f"{name}: clusters {seen[value]} and {c.id} have the same {field} ({shown}); "
                "each cluster needs its own")
        seen[value] = c.id
