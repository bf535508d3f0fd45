"""The configuration half of the engine (DESIGN.md §5–§7): `cluster/` at a SHA, per cluster.

- `source`: the `cluster/` tree at a SHA, read straight from the git object database and cached
  per SHA (or from a directory, for `provision --directory`).
- `templates`, `helpers`, `quantity`: the one sandboxed Jinja2 environment and its helpers.
- `defaults`: `config-defaults.yaml` rendered and merged under the registry's config items.
- `deletions`: the models of `manifests/deletions.yaml` and `cf-deletions.yaml`.
- `values`: the `values` of the template context, and the placeholders used offline.
- `render`: every stack, node-pool stack, manifest and deletion list of one cluster.
- `composed`: the same from several config sources, composed as CLM's `CombinedSource`.
- `output`, `secrets`, `diff`: rendered files on disk or stdout, masked; the rendered diff.
"""
