"""A small CLM repository's cluster/ in Go templates: what `convert` tests convert."""

from __future__ import annotations

CLM_FILES = {
    "cluster/cluster.yaml": (
        "Description: main stack of {{ .Cluster.ID }} ({{ .Cluster.Environment }})\n"
        "Resources:\n"
        "{{- range $i, $pool := .Cluster.NodePools }}\n"
        "  Pool{{ $i }}: {Name: {{ $pool.Name }}, Spot: {{ $pool.IsSpot }}}\n"
        "{{- end }}\n"
        "  Zone: {{ index .Values.subnets \"*\" }}\n"
        "  Account: {{ accountID .Cluster.InfrastructureAccount }}\n"
    ),
    "cluster/config-defaults.yaml": (
        "replicas: {{ if eq .Cluster.Environment \"production\" }}3{{ else }}1{{ end }}\n"
        "tier: \"{{ printf \"%s-%d\" .Cluster.Environment 2 }}\"\n"
    ),
    "cluster/manifests/app/config.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n"
        "data:\n  tier: {{ .Cluster.ConfigItems.tier }}\n"
    ),
    "cluster/manifests/app/deployment.yaml": (
        "{{ define \"labels\" }}app: {{ . }}{{ end -}}\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n"
        "  labels: { {{- template \"labels\" \"app\" -}} }\n"
        "  annotations:\n    config-hash: {{ manifestHash \"config.yaml\" }}\n"
        "spec:\n  replicas: {{ .Cluster.ConfigItems.replicas }}\n"
        "{{- if index .Cluster.ConfigItems \"efs_id\" }}\n  efs: true\n{{- end }}\n"
        "{{- with .Values.hosted_zone }}\n  host: api.{{ . }}\n{{- end }}\n"
    ),
    "cluster/node-pools/worker-default/stack.yaml": (
        "Pool: {{ .NodePool.Name }} of {{ .Cluster.LocalID }}\n"
        "Image: {{ amiID \"kubernetes-node\" \"123456789012\" }}\n"
        "CPU: {{ .Values.InstanceInfo.VCPU }} ({{ instanceTypeCPUQuantity "
        "(index .NodePool.InstanceTypes 0) }})\n"
        "{{/* a comment CLM drops */}}\n"
    ),
}
