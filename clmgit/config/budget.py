"""A render budget: how long templates may run and how much they may write, per template and
per cluster, so that a template with nested loops of 10¹⁰ steps or a gigabyte of output fails
its cluster instead of hanging `render`, `reconcile`, PR previews and the controller.

Time costs the render nothing while it is within budget: one watchdog thread per process keeps
the deadlines of the renders in progress and, when one passes, raises `RenderStopped` in the
rendering thread (CPython's asynchronous exception, checked between bytecodes, so it stops
compiled template code wherever it loops). Output is counted as it is produced, a batch of
chunks at a time. `RenderStopped` is a BaseException, so that neither a template's helpers nor
Jinja take it for a template's own error; `templates` turns it into a `TemplateError` that
names the template and the limit.

Limits come from the environment (`LIMITS`), with defaults of 10 s and 10 MiB per template,
60 s and 100 MiB for all the templates of one cluster.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import threading
import time
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from clmgit.errors import ConfigError

MIB = 1 << 20
#: (variable, default) of each limit.
LIMITS = {
    "template_seconds": ("CLMGIT_RENDER_TEMPLATE_SECONDS", 10.0),
    "template_bytes": ("CLMGIT_RENDER_TEMPLATE_BYTES", 10 * MIB),
    "cluster_seconds": ("CLMGIT_RENDER_CLUSTER_SECONDS", 60.0),
    "cluster_bytes": ("CLMGIT_RENDER_CLUSTER_BYTES", 100 * MIB),
}
#: The watchdog looks at least this often (seconds); only a deadline before its next look
#: wakes it early.
_TICK = 1.0
#: Output chunks counted at once (a template overshoots its size limit by at most this many).
_BATCH = 1024


class RenderStopped(BaseException):
    """A render went over its budget; `why` says which limit, `path` is the innermost template
    being rendered when it stopped (set on the way out)."""

    def __init__(self, why: str = "") -> None:
        super().__init__(why)
        self.why = why
        self.path = ""


@dataclass
class Budget:
    """The limits of one cluster's renders, and what its renders have used so far."""

    template_seconds: float = LIMITS["template_seconds"][1]
    template_bytes: int = int(LIMITS["template_bytes"][1])
    cluster_seconds: float = LIMITS["cluster_seconds"][1]
    cluster_bytes: int = int(LIMITS["cluster_bytes"][1])
    spent: float = 0.0
    written: int = 0

    @classmethod
    def from_environment(cls) -> Budget:
        limits: dict[str, Any] = {name: _limit(name) for name in LIMITS}
        return cls(**limits)

    def start(self) -> _Slot | None:
        """The start of one render (a file and the siblings it renders), to be ended by
        `stop`; a render nested in another on this thread counts toward the outer one (None)."""
        slot = _WATCHDOG.slot()
        if slot.depth:
            slot.depth += 1
            return None
        left = self.cluster_seconds - self.spent
        if left <= 0:
            raise RenderStopped(self.time_limit(per_template=False))
        slot.depth = 1
        slot.started = time.monotonic()
        slot.budget = self
        slot.per_template = self.template_seconds <= left
        _WATCHDOG.arm(slot, slot.started + min(self.template_seconds, left))
        return slot

    def stop(self, slot: _Slot | None) -> None:
        if slot is None:
            _WATCHDOG.slot().depth -= 1
            return
        slot.depth = 0
        _WATCHDOG.disarm(slot)
        self.spent += time.monotonic() - slot.started

    def collect(self, chunks: Iterable[str]) -> str:
        """The output of one template, counted as it is produced."""
        parts: list[str] = []
        size = 0
        batches = iter(lambda: list(itertools.islice(chunks, _BATCH)), [])
        for batch in batches:
            text = "".join(batch)
            size += len(text)
            self.written += len(text)
            if size > self.template_bytes:
                raise RenderStopped(
                    f"wrote more than {_size(self.template_bytes)}, the limit per template "
                    f"({LIMITS['template_bytes'][0]})")
            if self.written > self.cluster_bytes:
                raise RenderStopped(
                    f"wrote past {_size(self.cluster_bytes)}, the limit for the templates of "
                    f"one cluster ({LIMITS['cluster_bytes'][0]})")
            parts.append(text)
        return "".join(parts)

    def time_limit(self, *, per_template: bool) -> str:
        """Which time limit a render ran past, as the sentence ends."""
        if per_template:
            return (f"took longer than {self.template_seconds:g} s, the limit per template "
                    f"({LIMITS['template_seconds'][0]})")
        return (f"ran past {self.cluster_seconds:g} s, the limit for the templates of one "
                f"cluster ({LIMITS['cluster_seconds'][0]})")


#: The largest number `**` may compute in a template (bits), far beyond any config value.
MAX_POWER_BITS = 1 << 16


def checked_binop(operator: str, left: Any, right: Any, *, max_bytes: int) -> Any:
    """`left * right` or `left ** right`, refused (`RenderStopped`) when the result would be
    larger than `max_bytes` (a repeated string or list) or `MAX_POWER_BITS`: one such step of
    C code builds the whole value at once, before any output is counted or any clock read."""
    if operator == "*":
        for seq, n in ((left, right), (right, left)):
            if isinstance(seq, str | bytes | list | tuple) and isinstance(n, int):
                if len(seq) * n > max_bytes:
                    raise RenderStopped(
                        f"would make a value of {len(seq) * n} items at once, more than the "
                        f"limit per template ({LIMITS['template_bytes'][0]})")
        return left * right
    if (isinstance(left, int) and isinstance(right, int) and right > 0
            and left.bit_length() * right > MAX_POWER_BITS):
        raise RenderStopped(f"would compute a number of more than {MAX_POWER_BITS} bits")
    return left**right


def _limit(name: str) -> float | int:
    variable, default = LIMITS[name]
    given = os.environ.get(variable, "").strip()
    if not given:
        return default
    kind = int if isinstance(default, int) else float
    try:
        value = kind(given)
    except ValueError:
        value = 0
    if value <= 0:
        what = "a whole number of bytes" if kind is int else "a number of seconds"
        raise ConfigError(f"{variable}={given!r}: it must be {what} above 0")
    return value


def _size(n: int) -> str:
    return f"{n / MIB:g} MiB" if n >= MIB else f"{n} bytes"


class _Slot:
    """One thread's render in progress, as the watchdog sees it. The thread arms it without a
    lock (single stores, the deadline last); firing and disarming exclude each other under
    `lock`, so a stop is either taken back or raised inside the render."""

    def __init__(self) -> None:
        self.thread = threading.get_ident()
        self.lock = threading.Lock()
        self.deadline = float("inf")
        self.budget: Budget | None = None
        self.per_template = True
        self.fired = False
        self.depth = 0
        self.started = 0.0


class _Watchdog:
    """One thread per process that stops renders past their deadline (see the module doc).
    Arming a render is two attribute stores; the watchdog looks every `_TICK` seconds, and is
    woken early only for a deadline before its next look (tiny budgets, as in tests)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Nothing armed and no thread yet; also in a forked child, which has none of its
        parent's threads (reconcile's worker processes render too)."""
        self._cond = threading.Condition(threading.Lock())
        self._slots: weakref.WeakSet[_Slot] = weakref.WeakSet()
        self._local = threading.local()
        self._started = False
        self._wake_at = 0.0

    def slot(self) -> _Slot:
        """This thread's slot; the first one made starts the watchdog's thread."""
        slot: _Slot | None = getattr(self._local, "slot", None)
        if slot is None:
            slot = self._local.slot = _Slot()
            with self._cond:
                if not self._started:
                    self._started = True
                    threading.Thread(target=self._watch, args=(self._cond, self._slots),
                                     name="clmgit-render-watchdog", daemon=True).start()
                self._slots.add(slot)
        return slot

    def arm(self, slot: _Slot, deadline: float) -> None:
        slot.deadline = deadline
        if deadline < self._wake_at:
            with self._cond:
                self._cond.notify()

    def disarm(self, slot: _Slot) -> None:
        """No stop for this render any more; one sent but not yet raised is taken back. (If it
        is raised while this runs, it propagates: the deadline had passed.)"""
        with slot.lock:
            slot.deadline = float("inf")
            fired, slot.fired = slot.fired, False
        if fired:
            _send(slot.thread, None)

    def _watch(self, cond: threading.Condition, slots: weakref.WeakSet[_Slot]) -> None:
        with cond:
            while True:
                now = time.monotonic()
                for slot in list(slots):
                    if slot.deadline <= now:
                        self._fire(slot, now)
                later = [slot.deadline for slot in slots if slot.deadline > now]
                self._wake_at = min([*later, now + _TICK])
                cond.wait(self._wake_at - now)

    @staticmethod
    def _fire(slot: _Slot, now: float) -> None:
        with slot.lock:
            if slot.deadline <= now and not slot.fired:
                slot.fired = True
                why = slot.budget.time_limit(per_template=slot.per_template) if slot.budget else ""
                _send(slot.thread, RenderStopped(why))


def _send(thread: int, error: BaseException | None) -> None:
    """Raise `error` in `thread` at its next bytecode (None: take a pending one back)."""
    payload = ctypes.py_object(type(error)) if error is not None else None
    if error is not None:
        _PENDING[thread] = error
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread), payload)


#: The exception each thread was sent (an asynchronous exception is sent as a class: the
#: instance with its reason is looked up here when it is caught).
_PENDING: dict[int, BaseException] = {}


def stopped_reason(error: RenderStopped) -> str:
    """Why a render stopped: the reason of the exception sent to this thread if `error` came
    from the watchdog (raised as a bare class), else its own."""
    if error.why:
        return error.why
    sent = _PENDING.pop(threading.get_ident(), None)
    return sent.why if isinstance(sent, RenderStopped) else "went over its budget"


_WATCHDOG = _Watchdog()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_WATCHDOG.reset)
