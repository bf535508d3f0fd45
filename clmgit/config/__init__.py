"""A cluster's configuration at a SHA (docs/explanation/design.md: the engine, steps 1–3):
`cluster/` read from git objects or a directory (`source`; `composed` for several sources), rendered
in the one sandboxed Jinja environment (`templates`, `helpers`, CLM's `clmfuncs` and `computed`,
`offline` without AWS) into every stack, node-pool stack, manifest and deletion list (`render`), and
shown masked (`output`, `diff`, `secrets`). Applying it is `clmgit.engine`'s; AWS is asked only
through the `ClmAccount` and `Ec2Info` ports.
"""
