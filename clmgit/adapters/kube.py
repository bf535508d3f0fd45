"""Kubernetes through the official `kubernetes` client: the real `KubeClient`. The only module that
imports `kubernetes`.

Calls go through the client's own request machinery (`ApiClient.param_serialize`/`call_api`:
its auth, TLS and proxy settings) with our own paths, so one small module covers every kind,
custom resources included. Discovery (`/api/v1`, `/apis/<group>/<version>`) is read once per
client and read again when a kind is not found, since a CRD applied a moment ago serves new kinds.

429 and 5xx answers and connection errors are retried with backoff through the engine's `Clock`,
except an eviction's 429 (and the 500 for a pod under several budgets): that is a
PodDisruptionBudget saying "not now", which the drain handles. Every other error leaves this
module as an `ApplyError` naming the object; the bearer token is never part of a message.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

import urllib3
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.config.config_exception import ConfigException

from clmgit import events
from clmgit.cache import write_atomically
from clmgit.engine import takeover
from clmgit.engine.clock import Backoff, Clock, SystemClock
from clmgit.engine.kube import FIELD_MANAGER, Kind, KubeConflict, Obj, Objs
from clmgit.errors import ApplyError, ConfigError
from clmgit.model import Cluster

Kinds = list[Kind]  # `list` is also a method name below
RETRY_BACKOFF = Backoff(initial=0.5, factor=2, maximum=10, timeout=60)
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
MULTIPLE_PDBS = "more than one PodDisruptionBudget"
TAKEOVER_ATTEMPTS = 3
#: Seconds to connect, and to wait for an answer: a call that hangs is given up (and retried
#: within RETRY_BACKOFF) instead of outlasting an interrupted run's stop.
REQUEST_TIMEOUT = (5.0, 30.0)
#: An EKS token is made again after this many seconds (it is good for 15 minutes).
EKS_TOKEN_REFRESH = 300.0
#: How the API server names the other manager in each cause of an apply conflict.
CONFLICT_CAUSE = re.compile(r'conflict with "([^"]+)"')


class _Retry(Exception):
    """An answer worth asking again (429/5xx, or no answer at all)."""


class KubeAPI:
    """The `KubeClient` on an `ApiClient`."""

    def __init__(self, api: k8s.ApiClient, *, clock: Clock | None = None,
                 backoff: Backoff = RETRY_BACKOFF, where: str = "") -> None:
        self._api = api
        #: How the cluster was reached, for errors a person must act on (an expired token).
        self._where = where or str(api.configuration.host)
        self._clock = clock or SystemClock()
        self._backoff = backoff
        self._kinds: Kinds | None = None

    # --- KubeClient ---

    def resolve(self, kind: str, api_version: str | None = None) -> Kind | None:
        found = self._find(kind, api_version)
        if found is None:
            self._kinds = None  # a CRD may have been applied since discovery was read
            found = self._find(kind, api_version)
        return found

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> Obj | None:
        status, body = self._call("GET", _path(kind, namespace, name))
        if status == 404:
            return None
        return self._checked(status, body, f"reading {kind.kind} {name}")

    def list(self, kind: Kind, *, namespace: str | None = None,
             label_selector: str | None = None, field_selector: str | None = None) -> list[Obj]:
        query = {"labelSelector": label_selector, "fieldSelector": field_selector}
        items: Objs = []
        while True:
            status, body = self._call("GET", _path(kind, namespace), query=query)
            body = self._checked(status, body, f"listing {kind.plural}")
            items += [{"apiVersion": kind.api_version, "kind": kind.kind, **item}
                      for item in body.get("items") or []]
            token = (body.get("metadata") or {}).get("continue")
            if not token:
                return items
            query["continue"] = token

    def apply(self, obj: Mapping[str, Any], *, dry_run: bool = False) -> Obj:
        kind = self.resolve(str(obj["kind"]), str(obj["apiVersion"]))
        name = obj["metadata"]["name"]
        if kind is None:
            raise ApplyError(f"cannot apply {obj['kind']} {name}: the cluster serves no "
                             f"{obj['kind']} in {obj['apiVersion']}")
        namespace = (obj["metadata"].get("namespace") or "default") if kind.namespaced else None
        body = dict(obj)
        if kind.namespaced:
            body["metadata"] = {**obj["metadata"], "namespace": namespace}
        where = f"{kind.kind} {namespace}/{name}" if namespace else f"{kind.kind} {name}"
        live = self.get(kind, name, namespace)
        migration = takeover.plan(live, FIELD_MANAGER) if live else None
        if migration is None:
            return self._apply(kind, namespace, body, where, dry_run=dry_run)
        if dry_run:
            return self._dry_run_after_takeover(kind, namespace, body, where, migration)
        self._take_over(kind, namespace, name, where, migration)
        return self._apply(kind, namespace, body, where, dry_run=False)

    def _apply(self, kind: Kind, namespace: str | None, body: Obj, where: str, *,
               dry_run: bool, force: bool = False) -> Obj:
        """One server-side apply as `clmgit`; a conflict is a `KubeConflict` naming it."""
        query = {"fieldManager": FIELD_MANAGER, "dryRun": "All" if dry_run else None,
                 "force": "true" if force else None}
        status, answer = self._call("PATCH", _path(kind, namespace, body["metadata"]["name"]),
                                    query=query, body=body, content_type=APPLY_PATCH)
        if status == 409:
            raise KubeConflict(f"applying {where} conflicts with another field manager: "
                               f"{_message(answer)}; remove the field from the manifest or "
                               "release it in the cluster", managers=_conflicting(answer))
        return self._checked(status, answer, f"applying {where}")

    def _take_over(self, kind: Kind, namespace: str | None, name: str, where: str,
                   migration: takeover.Takeover) -> None:
        """Send the migration's JSON patch; a write in between (409) means plan again."""
        for _ in range(TAKEOVER_ATTEMPTS):
            status, answer = self._call("PATCH", _path(kind, namespace, name),
                                        query={"fieldManager": FIELD_MANAGER},
                                        body=migration.patch, content_type=JSON_PATCH)
            if status != 409:
                taken = ", ".join(migration.managers)
                self._checked(status, answer, f"taking over {where} from {taken}")
                return
            live = self.get(kind, name, namespace)
            again = takeover.plan(live, FIELD_MANAGER) if live else None
            if again is None:
                return  # someone else migrated it (or deleted it: the apply will say)
            migration = again
        raise ApplyError(f"taking over {where}: it changed {TAKEOVER_ATTEMPTS} times while "
                         "clmgit migrated its field ownership; run again")

    def _dry_run_after_takeover(self, kind: Kind, namespace: str | None, body: Obj, where: str,
                                migration: takeover.Takeover) -> Obj:
        """The dry run cannot write the migration, so it asks the server with the migration in
        mind: a conflict only with the managers the migration takes from is not one after it
        (the fields would be clmgit's), so it asks again forcing; any other manager still
        conflicts. What the apply after the migration would prune is taken out of the answer."""
        try:
            answer = self._apply(kind, namespace, body, where, dry_run=True)
        except KubeConflict as e:
            if not e.managers or not set(e.managers) <= set(migration.managers):
                raise
            answer = self._apply(kind, namespace, body, where, dry_run=True, force=True)
        predicted = takeover.as_if_taken_over(answer, migration, FIELD_MANAGER)
        if predicted == answer:
            return answer
        return self._dry_run_update(kind, namespace, predicted, where)

    def _dry_run_update(self, kind: Kind, namespace: str | None, obj: Obj, where: str) -> Obj:
        """`obj` as the server would store it. What an apply prunes the server defaults again
        where the kind has a default (kubectl's client-side apply owned the defaults too); a
        dry-run update of the prediction lets the server fill them in."""
        meta = {k: v for k, v in obj["metadata"].items() if k != "managedFields"}
        status, stored = self._call("PUT", _path(kind, namespace, meta["name"]),
                                    query={"fieldManager": FIELD_MANAGER, "dryRun": "All"},
                                    body={**obj, "metadata": meta})
        return self._checked(status, stored, f"dry-running {where} after its takeover")

    def patch(self, kind: Kind, name: str, patch: Mapping[str, Any],
              namespace: str | None = None) -> Obj:
        status, body = self._call("PATCH", _path(kind, namespace, name), body=dict(patch),
                                  content_type=MERGE_PATCH)
        return self._checked(status, body, f"patching {kind.kind} {name}")

    def delete(self, kind: Kind, name: str, *, namespace: str | None = None,
               propagation_policy: str | None = None, grace_period_seconds: int | None = None,
               dry_run: bool = False) -> bool:
        options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        if dry_run:
            options["dryRun"] = ["All"]
        status, body = self._call("DELETE", _path(kind, namespace, name), body=options)
        if status == 404:
            return False
        self._checked(status, body, f"deleting {kind.kind} {name}")
        return True

    def evict(self, namespace: str, name: str, *, grace_period_seconds: int | None = None) -> bool:
        eviction: dict[str, Any] = {"apiVersion": "policy/v1", "kind": "Eviction",
                                    "metadata": {"name": name, "namespace": namespace}}
        if grace_period_seconds is not None:
            eviction["deleteOptions"] = {"gracePeriodSeconds": grace_period_seconds}
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/eviction"
        status, body = self._call("POST", path, body=eviction, eviction=True)
        if status == 404:
            return True
        if status == 429 or (status == 500 and MULTIPLE_PDBS in _message(body)):
            return False
        self._checked(status, body, f"evicting pod {namespace}/{name}")
        return True

    # --- discovery ---

    def _find(self, kind: str, api_version: str | None) -> Kind | None:
        wanted = kind.lower()
        for k in self._discovered():
            if wanted in (k.kind.lower(), k.plural) and api_version in (None, k.api_version):
                return k
        return None

    def _discovered(self) -> Kinds:
        if self._kinds is None:
            versions: list[str | None] = ["v1"]
            status, groups = self._call("GET", "/apis")
            groups = self._checked(status, groups, "reading API groups")
            # The preferred version of each group first: a kind by name resolves to it.
            for group in groups.get("groups") or []:
                preferred = (group.get("preferredVersion") or {}).get("groupVersion")
                others = [v["groupVersion"] for v in group.get("versions") or []]
                versions += [preferred, *[v for v in others if v != preferred]]
            self._kinds = [k for v in versions if v for k in self._resources(v)]
        return self._kinds

    def _resources(self, group_version: str) -> Kinds:
        path = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
        status, body = self._call("GET", path)
        if status == 404:  # a group going away between the two reads
            return []
        body = self._checked(status, body, f"reading the resources of {group_version}")
        return [Kind(group_version, r["kind"], bool(r.get("namespaced")), r["name"])
                for r in body.get("resources") or [] if "/" not in r["name"]]

    # --- HTTP ---

    def _call(self, method: str, path: str, *, query: Mapping[str, Any] | None = None,
              body: Any = None, content_type: str | None = None,
              eviction: bool = False) -> tuple[int, Any]:
        """(status, decoded body); retries what is worth retrying, with backoff."""
        delays = self._backoff.delays()
        waited = 0.0
        while True:
            try:
                return self._once(method, path, query, body, content_type, eviction)
            except _Retry as e:
                if waited >= self._backoff.timeout:
                    raise ApplyError(f"{method} {path}: {e}; the API server did not recover "
                                     f"within {self._backoff.timeout:g}s, run again") from None
                delay = next(delays)
                waited += delay
                events.emit(events.RETRY, target="kubernetes")
                self._clock.sleep(delay)

    def _once(self, method: str, path: str, query: Mapping[str, Any] | None, body: Any,
              content_type: str | None, eviction: bool) -> tuple[int, Any]:
        headers = {"Accept": "application/json", "Content-Type": content_type or
                   "application/json"}
        params = [(k, v) for k, v in (query or {}).items() if v is not None]
        if body is not None and content_type == APPLY_PATCH:
            body = json.dumps(body)  # YAML is a superset of JSON; the client sends it as is
        request = self._api.param_serialize(method, path, query_params=params,
                                            header_params=headers, body=body,
                                            auth_settings=["BearerToken"])
        try:
            response = self._api.call_api(*request, _request_timeout=REQUEST_TIMEOUT)
            response.read()
        except (urllib3.exceptions.HTTPError, OSError) as e:
            raise _Retry(f"no answer ({type(e).__name__})") from None
        text = response.data.decode() if response.data else ""
        decoded = json.loads(text) if text.startswith("{") else text
        status = int(response.status)
        if status == 401:
            raise ApplyError(f"the API server refused the credentials of {self._where} (401 "
                             f"Unauthorized): the token is expired or wrong; refresh it and run "
                             "again")
        if status >= 500 and not (eviction and MULTIPLE_PDBS in _message(decoded)):
            raise _Retry(f"{status} {_message(decoded)}")
        if status == 429 and not eviction:
            raise _Retry(f"429 {_message(decoded)}")
        return status, decoded

    @staticmethod
    def _checked(status: int, body: Any, what: str) -> Obj:
        if 200 <= status < 300:
            return cast(Obj, body)  # every success is a JSON object (a list's are its items)
        raise ApplyError(f"{what}: {status} {_message(body)}")


def _path(kind: Kind, namespace: str | None = None, name: str | None = None) -> str:
    base = "/api/v1" if kind.api_version == "v1" else f"/apis/{kind.api_version}"
    if kind.namespaced and namespace:
        base += f"/namespaces/{namespace}"
    base += f"/{kind.plural}"
    return f"{base}/{name}" if name else base


def _conflicting(body: Any) -> tuple[str, ...]:
    """The managers an apply conflict names, from its causes; () when it names none."""
    causes = ((body.get("details") or {}).get("causes") or []) if isinstance(body, Mapping) else []
    found = (CONFLICT_CAUSE.search(str(c.get("message", ""))) for c in causes)
    return tuple(sorted({m.group(1) for m in found if m}))


def _message(body: Any) -> str:
    if isinstance(body, Mapping):
        return str(body.get("message") or body.get("reason") or "")
    return str(body)[:200]


def connect(cluster: Cluster, *, token: str | None = None, kubeconfig: str | None = None,
            clock: Clock | None = None, backoff: Backoff = RETRY_BACKOFF) -> KubeAPI:
    """The cluster's API: a bearer token at `cluster.api_server_url`, else the kubeconfig context
    named after the cluster's id or, failing that, its alias."""
    if token:
        configuration = _at_api_server(cluster, "--token")
        _bearer(configuration, token)
        return KubeAPI(k8s.ApiClient(configuration), clock=clock, backoff=backoff,
                       where=f"--token at {configuration.host}")
    if not kubeconfig:
        raise ConfigError(f"no way to reach cluster {cluster.id}: give --token (CLMGIT_TOKEN) "
                          "or --kubeconfig")
    api, context = _from_kubeconfig(cluster, kubeconfig)
    return KubeAPI(api, clock=clock, backoff=backoff,
                   where=f"context {context!r} of {kubeconfig} ({api.configuration.host})")


def connect_eks(cluster: Cluster, token: Callable[[], str], *, clock: Clock | None = None,
                backoff: Backoff = RETRY_BACKOFF) -> KubeAPI:
    """An EKS cluster's API with tokens from `token()` (STS, made again every few minutes): at
    its `eks_endpoint` config item (or `api_server_url`), trusting the CA of its
    `eks_certificate_authority_data` item if it has one, as CLM records them."""
    configuration = _at_api_server(cluster, "--kube-auth eks", ENDPOINT_ITEM)
    ca = cluster.config_items.get(CA_ITEM, "")
    if ca:
        configuration.ssl_ca_cert = _ca_file(cluster, ca)
    made = [0.0]

    def refresh(conf: k8s.Configuration) -> None:
        if time.monotonic() - made[0] >= EKS_TOKEN_REFRESH:
            _bearer(conf, token())
            made[0] = time.monotonic()

    refresh(configuration)
    configuration.refresh_api_key_hook = refresh
    return KubeAPI(k8s.ApiClient(configuration), clock=clock, backoff=backoff,
                   where=f"EKS cluster {cluster.alias or cluster.id} at {configuration.host}")


#: The config items CLM records an EKS cluster's endpoint and CA in.
ENDPOINT_ITEM = "eks_endpoint"
CA_ITEM = "eks_certificate_authority_data"


def _at_api_server(cluster: Cluster, how: str, item: str = "") -> k8s.Configuration:
    host = (cluster.config_items.get(item, "") if item else "") or cluster.api_server_url
    if not host:
        raise ConfigError(f"cluster {cluster.id} has no api_server_url; set it in the "
                          f"registry (needed by {how}) or use --kubeconfig")
    return k8s.Configuration(host=host)


def _bearer(configuration: k8s.Configuration, token: str) -> None:
    configuration.api_key = {"BearerToken": token}
    configuration.api_key_prefix = {"BearerToken": "Bearer"}


def _ca_file(cluster: Cluster, data: str) -> str:
    """The CA written to a file (the client reads it from one), named by its hash: a CA is
    public, written once per machine, and never a different one under the same name."""
    try:
        pem = base64.b64decode(data, validate=True)
    except ValueError:
        raise ConfigError(f"cluster {cluster.id}: config item {CA_ITEM} is not base64; correct "
                          "the registry") from None
    path = Path(tempfile.gettempdir()) / f"clmgit-ca-{hashlib.sha256(pem).hexdigest()[:32]}.crt"
    if not path.exists():
        write_atomically(path, pem, mode=0o600)
    return str(path)


def _from_kubeconfig(cluster: Cluster, path: str) -> tuple[k8s.ApiClient, str]:
    try:
        contexts, _ = k8s_config.list_kube_config_contexts(config_file=path)
    except (ConfigException, OSError) as e:
        raise ConfigError(f"cannot read kubeconfig {path}: {e}") from None
    names = {c["name"] for c in contexts or ()}
    for candidate in (cluster.id, cluster.alias):
        if candidate and candidate in names:
            api = k8s_config.new_client_from_config(config_file=path, context=candidate,
                                                    persist_config=False)
            return api, candidate
    raise ConfigError(f"kubeconfig {path} has no context named {cluster.id!r}"
                      + (f" or {cluster.alias!r}" if cluster.alias else ""))
