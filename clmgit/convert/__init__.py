"""Bringing a CLM repository over: Go text/template parsed (`parser`), emitted as Jinja2
(`emitter`), evaluated with Go's semantics (`evaluator`) to prove both render alike."""
