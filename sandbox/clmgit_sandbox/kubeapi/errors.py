"""API errors and the `Status` bodies the real API server sends with them.

Messages, reasons and `details` follow k8s.io/apimachinery/pkg/api/errors, so that a client (and
clmgit's adapter) sees exactly what a real cluster would send: `pods "x" not found` with
`details.kind` the plural resource, `Deployment.apps "x" is invalid: ...` with `details.kind`
the Kind, and so on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

StatusBody = dict[str, Any]


def status_body(
    code: int,
    *,
    status: str = "Failure",
    reason: str = "",
    message: str = "",
    details: dict[str, Any] | None = None,
) -> StatusBody:
    """A `meta/v1 Status` object; empty fields are omitted as the server's encoder does."""
    body: StatusBody = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": status}
    if message:
        body["message"] = message
    if reason:
        body["reason"] = reason
    if details is not None:
        body["details"] = {key: value for key, value in details.items() if value not in ("", None)}
    if code:
        body["code"] = code
    return body


class APIError(Exception):
    """An error response: HTTP code plus the `Status` body that goes with it."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def body(self) -> StatusBody:
        return status_body(
            self.code, reason=self.reason, message=self.message, details=self.details
        )


@dataclass(frozen=True)
class FieldError:
    """One entry of a validation error list (`field.Error`)."""

    type: str  # FieldValueRequired, FieldValueInvalid, FieldValueForbidden, ...
    field: str
    detail: str = ""
    value: Any = None

    def body(self) -> str:
        prefixes = {
            "FieldValueRequired": "Required value",
            "FieldValueForbidden": "Forbidden",
            "FieldValueDuplicate": "Duplicate value",
            "FieldValueNotSupported": "Unsupported value",
        }
        if self.type in prefixes:
            text = prefixes[self.type]
            if self.type in ("FieldValueDuplicate", "FieldValueNotSupported"):
                text += f": {_go_quote(self.value)}"
        else:
            text = f"Invalid value: {_go_quote(self.value)}"
        return f"{text}: {self.detail}" if self.detail else text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


def _go_quote(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value).lower() if isinstance(value, bool) else str(value)


def qualified(group: str, name: str) -> str:
    """`pods` or `deployments.apps`: how the server names a resource or kind in messages."""
    return f"{name}.{group}" if group else name


def not_found(group: str, resource: str, name: str) -> APIError:
    message = f'{qualified(group, resource)} "{name}" not found'
    return APIError(404, "NotFound", message, {"name": name, "group": group, "kind": resource})


def already_exists(group: str, resource: str, name: str) -> APIError:
    message = f'{qualified(group, resource)} "{name}" already exists'
    return APIError(409, "AlreadyExists", message, {"name": name, "group": group, "kind": resource})


def conflict(group: str, resource: str, name: str, why: str) -> APIError:
    message = f'Operation cannot be fulfilled on {qualified(group, resource)} "{name}": {why}'
    return APIError(409, "Conflict", message, {"name": name, "group": group, "kind": resource})


MODIFIED = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def invalid(group: str, kind: str, name: str, errors: list[FieldError]) -> APIError:
    text = str(errors[0]) if len(errors) == 1 else "[" + ", ".join(map(str, errors)) + "]"
    causes = [{"reason": e.type, "message": e.body(), "field": e.field} for e in errors]
    message = f'{qualified(group, kind)} "{name}" is invalid: {text}'
    details = {"name": name, "group": group, "kind": kind, "causes": causes}
    return APIError(422, "Invalid", message, details)


def bad_request(message: str) -> APIError:
    return APIError(400, "BadRequest", message)


def unprocessable(message: str) -> APIError:
    """A patch that decodes but cannot be applied (JSON patch `test` failed, bad path, ...)."""
    return APIError(422, "Invalid", message)


def unsupported_media_type(message: str) -> APIError:
    return APIError(415, "UnsupportedMediaType", message)


def method_not_allowed() -> APIError:
    message = "the server does not allow this method on the requested resource"
    return APIError(405, "MethodNotAllowed", message, {})


def path_not_found() -> APIError:
    return APIError(404, "NotFound", "the server could not find the requested resource", {})


def unauthorized() -> APIError:
    return APIError(401, "Unauthorized", "Unauthorized")


def entity_too_large(limit: int) -> APIError:
    return APIError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}")


def too_many_requests(message: str, causes: list[dict[str, str]]) -> APIError:
    return APIError(429, "TooManyRequests", message, {"causes": causes})


def apply_conflict(conflicts: list[tuple[str, str]]) -> APIError:
    """Server-side apply conflicts: (manager description, field path) pairs."""
    causes = [
        {"reason": "FieldManagerConflict", "message": f"conflict with {who}", "field": path}
        for who, path in conflicts
    ]
    if len(conflicts) == 1:
        who, path = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {who}: {path}"
    else:
        lines: list[str] = []
        for who in sorted({who for who, _ in conflicts}):
            lines.append(f"conflicts with {who}:")
            lines.extend(f"- {path}" for other, path in conflicts if other == who)
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return APIError(409, "Conflict", message, {"causes": causes})
