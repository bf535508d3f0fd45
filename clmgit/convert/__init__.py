"""`clmgit convert`: a CLM repository's Go text/template `cluster/` brought over to Jinja2
(`parser`, `emitter`, `tree`, `migrate`, `sources`), and the proof that both render alike
(`check`, `evaluator` with Go's semantics, `variants`, `clmdata`, `compared`). It renders through
`clmgit.config` and changes no cluster; the converted repository is then promoted and reconciled
like any other."""
