"""Schemathesis against the live registry server, on SQLite and PostgreSQL, with both the
server's generated OpenAPI document and CLM's spec (data/clm-cluster-registry.yaml): valid and
invalid requests for every operation, on unknown ids and on a loaded cluster. No answer is a
500, none breaks its schema, no invalid input is accepted (and, for the server's own spec,
every status and content type is a documented one).

Bounded: `EXAMPLES` requests per operation, mode and pass (about 350 a run; 15–90 s each on
this project's shared 2-core machines), and a run over `BUDGET_SECONDS` fails, so that a hang cannot
stall `make test`. Marked slow (`make test` runs them, `make test-fast` does not);
CLMGIT_FUZZ_EXAMPLES raises the count for a longer hunt.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest
import requests
import schemathesis
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from tests.helpers.registry import CLM_SPEC, TOKEN, MakeRegistry, records

EXAMPLES = int(os.environ.get("CLMGIT_FUZZ_EXAMPLES", "5"))
BUDGET_SECONDS = 300.0
C0 = "aws:123456789012:eu-central-1:c0"
#: What a pass with the path's ids fixed uses: a loaded cluster and its pool.
LOADED = {"cluster_id": C0, "node_pool_name": "default-worker", "config_key": "flag",
          "account_id": "aws:123456789012"}


def load_spec(url: str, which: str) -> Any:
    if which == "generated":
        return schemathesis.openapi.from_dict(requests.get(url + "/openapi.json").json())
    return schemathesis.openapi.from_dict(yaml.safe_load(CLM_SPEC.read_text()))


@pytest.mark.slow
@pytest.mark.parametrize("which", ["generated", "clm"])
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_fuzzed_requests_never_break_the_server(
    make_registry: MakeRegistry, backend: str, which: str
) -> None:
    url = make_registry(backend, records(2))
    session = requests.Session()
    # CLM's client sends a bearer token and accepts JSON only (errors then come as JSON).
    headers = {"Authorization": f"Bearer {TOKEN}"}
    checks = [not_a_server_error, response_schema_conformance, negative_data_rejection]
    if which == "generated":
        checks += [status_code_conformance, content_type_conformance]
    else:
        headers["Accept"] = "application/json"
    schema = load_spec(url, which)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 17  # CLM has 17, ours one more (GET of a node pool)
    start = time.monotonic()
    calls = 0
    for fixed in (False, True):
        for operation in operations:
            if fixed and operation.label == "DELETE /kubernetes-clusters/{cluster_id}":
                continue  # the loaded cluster must stay for the other operations
            names = {p.name for p in operation.path_parameters}
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                if time.monotonic() - start > BUDGET_SECONDS:
                    pytest.fail(f"the fuzz run took over {BUDGET_SECONDS:g} s after {calls} calls")
                strategy = operation.as_strategy(
                    generation_mode=mode,
                    path_parameters={k: v for k, v in LOADED.items() if k in names} if fixed
                    else None,
                )

                @given(case=strategy)
                @settings(max_examples=EXAMPLES, deadline=None, database=None,
                          phases=[Phase.generate], suppress_health_check=list(HealthCheck))
                def call(case: Any) -> None:
                    nonlocal calls
                    calls += 1
                    # The token replaces the case's made-up one; a case without one (a negative
                    # case that dropped the required header) goes without, or the request sent
                    # would not be the invalid one generated.
                    given = headers if "authorization" in {h.lower() for h in case.headers or {}
                                                           } or which == "clm" else {
                        k: v for k, v in headers.items() if k != "Authorization"}
                    case.call_and_validate(base_url=url, session=session, headers=given,
                                           checks=checks)

                try:
                    call()
                except Unsatisfiable:
                    # Nothing of this operation can be made invalid (e.g. only fixed ids).
                    assert mode is GenerationMode.NEGATIVE, operation.label
    assert calls > len(operations) * 2
    # After all of it the server still answers, and clmgit's client reads every record.
    from clmgit.registry.http import HttpRegistry

    HttpRegistry(url, token=TOKEN).clusters()
