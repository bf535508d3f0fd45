"""The Go judge itself: real Go answers, and where they come from."""

from __future__ import annotations

import base64
import gzip
import json

from tests.helpers.data import DATA
from tests.helpers.gojudge import GO_LINE, go_gzip, go_render, go_version

REFERENCE = DATA


def test_go_fmt_printing_is_go_s_not_python_s() -> None:
    data = {"Values": {"f": {"__go": "float64", "v": 2.0}, "big": {"__go": "float64", "v": 1e6},
                       "strs": ["a", "b"], "nil": {"__go": "nil"},
                       "sm": {"__go": "map[string]string", "v": {"k": "v"}}}}
    template = ('{{ print "x=" true }}|{{ printf "%s" 3 }}|{{ .Values.f }}|{{ .Values.big }}|'
                "{{ .Values.strs }}|{{ .Values.sm }}|{{ .Values.nil }}")
    [answer] = go_render([{"template": template, "data": data}])
    assert answer == {"output": "x=true|%!s(int=3)|2|1e+06|[a b]|map[k:v]|<no value>"}


def test_missing_key_is_go_s_error() -> None:
    data = {"Cluster": {"ID": "c", "ConfigItems": {"a": "1"}}}
    [answer] = go_render([{"template": "{{ .Cluster.ConfigItems.b }}", "data": data}])
    assert "map has no entry for key" in answer["error"]


def test_reference_cases_without_clm_functions_agree_with_go() -> None:
    """The reference's answers were made by Go 1.27 with CLM's function library; the cases that
    call no function of CLM's must come out the same from this judge."""
    cases = json.loads((REFERENCE / "go-template-cases.json").read_text())["cases"]
    plain = [c for c in cases if "go_output" in c and not _calls_clm(c["template"])]
    answers = go_render([{"template": c["template"], "data": c["data"]} for c in plain])
    assert len(plain) > 20
    for case, answer in zip(plain, answers, strict=True):
        assert answer.get("output") == case["go_output"], case["name"]


def test_go_gzip_is_gzip_of_the_text() -> None:
    text = "#cloud-config\n" + "é" * 3000 + "\n"
    packed = go_gzip(text.encode())
    assert packed[:3] == b"\x1f\x8b\x08"
    assert gzip.decompress(packed).decode() == text
    assert packed != gzip.compress(text.encode(), mtime=0)  # zlib's deflate is not Go's


def test_reference_gzip_vectors_hold_their_texts() -> None:
    cases = json.loads((REFERENCE / "go-gzip-vectors.json").read_text())["cases"]
    for case in cases:
        packed = base64.b64decode(case["go_gzip_base64"])
        assert gzip.decompress(packed).decode() == case["text"], case["name"]


_CLM_FUNCTIONS = ("base64", "sumQuantities", "instanceType", "parseInt64", "getAWSAccountID",
                  "accountID", "mountUnitName", "dict", "list", "append", "split", "hostPort",
                  "Taints", "Requirements", "Karpenter", "Groups", "portForward", "azID",
                  "NodePool.", "Instance", "IsSpot", "IsKarpenter", "IsMaster")


def _calls_clm(template: str) -> bool:
    return any(name in template for name in _CLM_FUNCTIONS)


def test_the_judge_is_a_go_of_clms_line() -> None:
    """CLM's go.mod names Go 1.26: `range` over an integer (Go 1.22) and every other rule of
    the table are held to that line, not to whatever Go is newest."""
    assert go_version().startswith(GO_LINE)
    assert GO_LINE == "go1.26"
