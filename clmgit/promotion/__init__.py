"""Moving pins (docs/explanation/promotion.md): promotion and rollback planned, then landed
(`promote`, `write`, `remote` for `--push`), gates (`gates`, `health`), freeze, `sync-branches`,
pull requests (`pr`), and reading back: `status`, `history`, `preview` (`clmgit diff`); for several
config sources `sources*`; the commit of a file registry's state (`record`). The channel file's
model and edits are `clmgit.channels`; clusters are never touched here."""
