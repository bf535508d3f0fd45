"""What the emitter can tell about a value before the template runs: its kind (string, int,
bool) where CLM's data or the function called fixes it.

Where the kind is known, the converted Jinja uses its own operators and prints the value as it
is (Python prints a string, an int and — through the environment's `finalize` — a bool as Go
does); elsewhere it calls Go's builtins and printing (`clmgit.config.gocompat`). Knowing kinds is
only an optimisation of the render hot path: an unknown kind is always correct.
"""

from __future__ import annotations

STRING, INT, BOOL = "string", "int", "bool"
ITEMS = "items"  # CLM's config items: a map of strings
#: Kinds whose Python value prints as Go prints it.
PLAIN = frozenset({STRING, INT, BOOL})

_CLUSTER = {
    **dict.fromkeys(("ID", "Alias", "LocalID", "InfrastructureAccount", "Region",
                     "APIServerURL", "Environment", "Channel", "Provider", "LifecycleStatus",
                     "Owner", "AccountName", "Name", "InfrastructureAccountID", "WorkerRoleARN"),
                    STRING),
    "CriticalityLevel": INT, "ConfigItems": ITEMS,
}
_NODE_POOL = {
    **dict.fromkeys(("Name", "Profile", "DiscountStrategy", "InstanceType",
                     "KarpenterInstanceTypeStrategy"), STRING),
    **dict.fromkeys(("MinSize", "MaxSize"), INT),
    **dict.fromkeys(("IsSpot", "IsMaster", "IsKarpenter"), BOOL),
    "ConfigItems": ITEMS,
}
_ROOTS = {"Cluster": _CLUSTER, "NodePool": _NODE_POOL}

_FUNCTIONS = {
    **dict.fromkeys(("print", "printf", "println", "base64", "base64Decode", "sha256",
                     "getAWSAccountID", "accountID", "mountUnitName", "awsValidID", "indexedList",
                     "join", "indent", "sumQuantities", "publicKey", "certificateExpiry",
                     "generateJWKSDocument", "generateOIDCDiscoveryDocument",
                     "kubernetesSizeToKiloBytes", "amiID", "instanceTypeCPUQuantity",
                     "instanceTypeMemoryQuantity", "nthAddressFromCIDR", "manifestHash"), STRING),
    **dict.fromkeys(("len", "nodeCIDRMaxNodes", "nodeCIDRMaxNodesPodCIDR", "nodeCIDRMaxPods"),
                    INT),
    **dict.fromkeys(("eq", "ne", "lt", "le", "gt", "ge", "not", "hasPrefix", "hasSuffix"), BOOL),
}


def literal_kind(value: object) -> str | None:
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT
    return STRING if isinstance(value, str) else None


def field_kind(names: tuple[str, ...]) -> str | None:
    """The kind of a field path from the template's data (`Cluster.LocalID`,
    `NodePool.ConfigItems.x`)."""
    fields = _ROOTS.get(names[0]) if names else None
    if fields is None or len(names) < 2:
        return None
    kind = fields.get(names[1])
    if kind == ITEMS and len(names) == 3:
        return STRING
    return kind if len(names) == 2 else None


def call_kind(name: str, args: list[str | None]) -> str | None:
    """The kind of a builtin's or CLM function's result, given its arguments' kinds."""
    if name == "index" and args[:1] == [ITEMS] and len(args) == 2:
        return STRING
    if name in ("and", "or"):
        return args[0] if args and all(a == args[0] for a in args) else None
    return _FUNCTIONS.get(name)
