"""The rule that keeps a deployed value's bytes when the rendered value is the same content in
another encoding (`clmgit.engine.encodings`), against Go's own gzip: the reference vectors (made
by Go 1.19 and 1.27's old flate) and the Go judge (whatever Go the test extra installed)."""

from __future__ import annotations

import base64
import json

import pytest

from clmgit.config.computed import user_data
from clmgit.engine.encodings import gunzipped, keep_deployed_encodings
from tests.helpers.data import data_path
from tests.helpers.gojudge import go_gzip

REFERENCE = data_path("go-gzip-vectors.json")
TEXT = "#cloud-config\nwrite_files:\n  - path: /etc/kubernetes/pool\n    content: workers\n"


def go_user_data(text: str) -> str:
    return base64.b64encode(go_gzip(text.encode())).decode()


def template(value: str, image: str = "ami-1") -> str:
    return f"Resources:\n  LaunchTemplate:\n    Properties:\n      ImageId: {image}\n" \
           f"      UserData: \"{value}\"\n"


def test_go_and_python_gzip_differ_in_bytes_and_agree_in_content() -> None:
    go, python = go_user_data(TEXT), user_data(TEXT)

    assert go != python  # the reason the rule exists
    assert gunzipped(go) == gunzipped(python) == TEXT.encode()


def test_a_rendered_value_equal_in_content_keeps_the_deployed_bytes() -> None:
    deployed = template(go_user_data(TEXT))

    assert keep_deployed_encodings(template(user_data(TEXT)), deployed) == deployed


def test_a_value_whose_content_changed_is_written_as_rendered() -> None:
    rendered = template(user_data(TEXT + "# changed\n"))

    assert keep_deployed_encodings(rendered, template(go_user_data(TEXT))) == rendered


def test_only_the_encoding_is_kept_a_change_elsewhere_stays() -> None:
    rendered = template(user_data(TEXT), image="ami-2")

    kept = keep_deployed_encodings(rendered, template(go_user_data(TEXT)))

    assert kept == template(go_user_data(TEXT), image="ami-2")


def test_values_are_matched_by_content_wherever_they_are() -> None:
    a, b = "#cloud-config\n# a\n", "#cloud-config\n# b\n"
    deployed = template(go_user_data(a)) + template(go_user_data(b))
    rendered = template(user_data(b)) + template(user_data(a))

    assert keep_deployed_encodings(rendered, deployed) == (
        template(go_user_data(b)) + template(go_user_data(a)))


def test_a_json_template_given_back_parsed_is_read_too() -> None:
    deployed = {"Resources": {"LaunchTemplate": {"Properties": {"UserData": go_user_data(TEXT)}}}}
    rendered = json.dumps({"Resources": {"LaunchTemplate": {"Properties": {
        "UserData": user_data(TEXT)}}}}, indent=2)

    assert go_user_data(TEXT) in keep_deployed_encodings(rendered, deployed)


@pytest.mark.parametrize("value", ["H4sIbroken", "H4sI" + "A" * 40, "not base64 at all"])
def test_something_that_only_looks_like_gzip_is_left_alone(value: str) -> None:
    rendered = template(value)

    assert keep_deployed_encodings(rendered, template(go_user_data(TEXT))) == rendered


def test_the_reference_vectors_of_go_are_recognised_as_the_same_content() -> None:
    cases = json.loads(REFERENCE.read_text())["cases"]
    for case in cases:
        deployed = template(case["go_gzip_base64"])
        assert keep_deployed_encodings(template(user_data(case["text"])), deployed) == deployed
