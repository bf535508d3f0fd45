"""Maintenance windows: when reconcile may change a cluster (clmgit/windows.py for the syntax).

A cluster's window is its registry config item `maintenance_window` (one line, the zone last:
`Sat-Sun 02:00-05:00 Europe/Berlin`), else the `maintenance_window` of its group in the channel
file. An update starts only inside it; outside it the cluster is `waiting`, with the next
opening. An update under way pauses before its next wave once the window has closed
(`clmgit.engine.rolling.WindowClosed`); the next run inside a window resumes it. A new cluster
and a decommission are not held: neither disturbs workloads that run. `--ignore-window` starts
the update anyway and says so in the result and the registry's problems.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from clmgit import timestamps
from clmgit.channels import Channel, maintenance_window
from clmgit.engine.rolling import WindowClosed
from clmgit.errors import ConfigError
from clmgit.model import Cluster
from clmgit.reconcile.plan import BLOCKED, UPDATE, WAITING, Target
from clmgit.windows import until

#: The problem type of an update started outside its window by --ignore-window.
IGNORED = "clmgit/maintenance-window-ignored"
#: How the note of such an update ends.
IGNORED_NOTE = "by --ignore-window"


@dataclass(frozen=True)
class MaintenanceWindows:
    channels: Mapping[str, Channel]
    ignore: bool = False
    now: Callable[[], datetime] = timestamps.now

    def hold(self, target: Target) -> Target:
        """`target`, or `waiting` when it would start an update outside the window (with
        --ignore-window: started, the reason kept as a note)."""
        if target.action != UPDATE:
            return target
        try:
            window = maintenance_window(self.channels, target.cluster)
        except ConfigError as e:
            return Target(target.cluster, BLOCKED, reason=str(e))
        moment = self.now()
        if window is None or window.is_open(moment):
            return target
        outside = f"outside its maintenance window ({window.describe()}), {until(window, moment)}"
        if self.ignore:
            return replace(target, reason=f"started {outside}, {IGNORED_NOTE}")
        return Target(target.cluster, WAITING, target.sha, target.version, reason=outside)

    def between_waves(self, cluster: Cluster, now: datetime) -> None:
        """The engine's question before each wave: pause once the window has closed."""
        if self.ignore:
            return
        try:
            window = maintenance_window(self.channels, cluster)
        except ConfigError:
            return  # the run's plan refused it already; an update under way is not cut short
        if window is not None and not window.is_open(now):
            raise WindowClosed(f"paused between waves: its maintenance window closed, "
                               f"{until(window, now)}; the next run resumes the update")
