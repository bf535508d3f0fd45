"""`clmgit report`: the fleet at a glance, as one self-contained HTML page, as Markdown, or served
read-only on 127.0.0.1. `gather` builds a `Report` (`model`) from the functions behind `status`,
`history` and the promotion planner, so it judges nothing itself; `html`, `markdown` and `matrix`
lay it out, `forge` links to the repository's host, `files` writes whole, `serve` gathers anew.
"""
