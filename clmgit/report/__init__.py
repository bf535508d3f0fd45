"""`clmgit report`: the fleet at a glance, as one self-contained HTML page, as Markdown, or
served read-only on 127.0.0.1.

`gather` builds a `Report` (model.py) from the same functions `status`, `history` and the
promotion planner use; `html` and `markdown` only render it; `serve` gathers anew on each load.
"""
