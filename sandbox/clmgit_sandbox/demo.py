"""`make demo`: the whole story on this machine, no cloud account needed.

AWS is moto in server mode and each cluster has its own Kubernetes API emulator with a node
simulator, all on 127.0.0.1 and started here. A throw-away config repo, made from
`examples/config-repo` by its `init.sh`, has four channels (dev -> alpha -> beta -> stable) and
three clusters in a clusters.yaml, one per environment.
Every `clmgit` line is the real command in its own process, as you would type it.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from clmgit.model import parse_cluster
from clmgit_sandbox.aws import aws_environment, moto_server
from clmgit_sandbox.configrepo import ConfigRepoBuilder, example_records, init_example_repo
from clmgit_sandbox.configtree import cluster_tree
from clmgit_sandbox.fleet import LocalFleet


def say(text: str) -> None:
    print(f"\n\033[1m# {text}\033[0m" if sys.stdout.isatty() else f"\n# {text}", flush=True)


class Demo:
    """Runs each command exactly as it prints it; where the repo, the kubeconfig and AWS are
    comes from the environment it printed first."""

    def __init__(self, environment: dict[str, str]) -> None:
        self.environment = environment
        say("Every command below runs with this environment (paste it to run them yourself "
            "while the demo's world exists):")
        for name, value in environment.items():
            print(f"export {name}={shlex.quote(value)}")
        print(f"export PATH={shlex.quote(str(Path(sys.executable).parent))}:$PATH", flush=True)

    def clmgit(self, *args: str, expect: int = 0, now: str | None = None) -> None:
        """`now`: the command's clock (CLMGIT_NOW), shown on the command line."""
        at = {"CLMGIT_NOW": now} if now else {}
        prefix = "".join(f"{k}={v} " for k, v in at.items())
        print(f"$ {prefix}clmgit {shlex.join(args)}", flush=True)
        cmd = [sys.executable, "-m", "clmgit", *args]
        code = subprocess.run(cmd, env={**os.environ, **self.environment, **at}).returncode
        if code != expect:
            raise SystemExit(f"demo: expected exit code {expect}, got {code}")


def started_at() -> float:
    """When this process started, on `time.monotonic`'s clock, so that the duration the demo
    prints includes Python starting and importing (seconds on a busy machine); where /proc
    cannot tell (not Linux), now."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        age = uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
    except (OSError, ValueError, IndexError):
        return time.monotonic()
    return time.monotonic() - age


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def stop_like_ctrl_c() -> None:
    """SIGTERM and SIGHUP (a closed terminal) end the program as Ctrl-C does: a KeyboardInterrupt
    unwinds every `with`, so the temporary directory goes, moto and the emulators stop, and a
    running `clmgit` child is killed by `subprocess.run`. SIGINT is set too: a shell that starts
    us in the background would leave it ignored."""
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, _interrupt)


def main(argv: list[str] | None = None) -> int:
    import argparse

    argparse.ArgumentParser(
        prog="python -m clmgit_sandbox.demo",
        description="A newcomer's walk through clmgit on this machine: moto, a Kubernetes API "
        "emulator per cluster and the example config repo; promote, reconcile, roll back; "
        "everything removed at the end.").parse_args(argv)  # --help ends here
    stop_like_ctrl_c()
    try:
        run_demo()
    except KeyboardInterrupt:
        print("\ndemo: interrupted; moto, the emulators and the repo are gone", file=sys.stderr)
        return 130
    return 0


def run_demo() -> None:
    started = started_at()
    with tempfile.TemporaryDirectory(prefix="clmgit-demo-") as tmp, moto_server() as endpoint:
        os.environ["CLMGIT_CACHE_DIR"] = str(Path(tmp) / "cache")
        b = init_example_repo(Path(tmp) / "config")
        clusters = [parse_cluster(r, "demo") for r in example_records()]
        with LocalFleet(clusters, Path(tmp) / "kubeconfig") as fleet:
            demo = Demo({"CLMGIT_REPO": str(b.path), "CLMGIT_KUBECONFIG": str(fleet.kubeconfig),
                         "CLMGIT_CACHE_DIR": os.environ["CLMGIT_CACHE_DIR"],
                         **aws_environment(endpoint)})
            story(demo, b)
            report = write_report(demo)
    say(f"Done in {time.monotonic() - started:.0f} s; moto, the emulators and the repo are gone.")
    say("To explore such a fleet yourself with kubectl, the AWS CLI and clmgit: `make sandbox` "
        "keeps it running and prints the lines to paste")
    say(f"The report outlives the demo; open it in a browser: {report}")


#: Where the demo leaves its report (build/ is git-ignored; `make clean` removes it).
REPORT = Path("build") / "demo-report.html"


def write_report(demo: Demo) -> Path:
    say("The fleet at a glance: one self-contained HTML page (also --markdown, --serve)")
    path = REPORT.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    demo.clmgit("report", "--html", str(path))
    return path


def story(demo: Demo, b: ConfigRepoBuilder) -> None:
    run = demo.clmgit
    say(f"A config repo in {b.path}: channels and clusters.yaml on main, cluster/ on the "
        "channel branches; three new clusters, one per environment")
    run("status")
    say("reconcile creates them: CloudFormation stacks (moto), node pools, manifests")
    run("reconcile")
    run("status")
    say("A second run has nothing to do, and asks no cloud")
    run("reconcile")

    say("An engineer merges version 2 into dev: a new worker image, tracing on, a "
        "post_apply deletion of the legacy ConfigMap, and (by mistake) an echo image that "
        "crash-loops: the node simulator makes any image tagged :broken do so")
    v2 = cluster_tree(2)
    echo = "cluster/manifests/platform/echo.yaml"
    b.commit("dev", {**v2, echo: _tag(v2[echo], "broken")},
             "Worker image 0a0a0a02, tracing, drop legacy-settings, echo 1.2")
    run("status", "--channel", "dev")
    run("reconcile", "--dry-run")
    say("dev follows its branch: reconcile rolls dev-1's node (surge first, drain, terminate)")
    run("reconcile")

    health_story(demo, b)
    say("Promote to alpha: its gates want every dev cluster on the commit and healthy, which "
        "dev-1 is; the commit records the verdicts")
    run("promote", "dev", "alpha")
    run("reconcile", "--channel", "alpha")

    say("beta: the canary group first; the preview shows the rendered change")
    run("diff", "alpha", "beta", "--group", "canary")
    say("beta's soak gate wants 2h on alpha first: refused, with the time left")
    run("promote", "alpha", "beta", "--group", "canary", expect=1)
    say("An override is explicit and written into the commit")
    run("promote", "alpha", "beta", "--group", "canary", "--force")
    run("reconcile")
    window_story(demo, b)

    say("Promotion only moves forward: an older commit is refused")
    first = b.git("rev-list", "--max-parents=0", "dev")
    run("promote", "dev", "alpha", "--sha", first, expect=1)

    say("Where everything stands, and who promoted what")
    run("status")
    run("history")


BETA_WINDOWS = """\
windows:                    # promotions land only inside these (deny wins)
  timezone: Europe/Berlin
  allow: ["Mon-Thu 09:00-16:00"]
  deny: ["12-20..01-06"]
"""


def window_story(demo: Demo, b: ConfigRepoBuilder) -> None:
    """beta gets promotion windows; on a Friday evening the rest of beta is refused, with the
    next opening. CLMGIT_NOW sets the clock: the demo does not wait for Friday."""
    say("beta takes promotions Mon-Thu 09:00-16:00 Berlin time, never 20 Dec - 6 Jan "
        "(windows: in channels/beta.yaml); on a Friday evening the rest of beta is refused, "
        "and the refusal says when the next window opens")
    beta = b.git("show", "main:channels/beta.yaml") + "\n"
    b.commit("main", {"channels/beta.yaml": beta.replace("groups:", BETA_WINDOWS + "groups:", 1)},
             "beta: promotion windows")
    demo.clmgit("promote", "alpha", "beta", "--group", "default", expect=1,
                now=_next_friday_evening())


def _next_friday_evening() -> str:
    """17:00 in Berlin on a Friday at least two days ahead: after the soak, whatever the date."""
    from datetime import datetime, timedelta
    from zoneinfo import ZoneInfo

    day = datetime.now(ZoneInfo("Europe/Berlin")).date() + timedelta(days=2)
    day += timedelta(days=(4 - day.weekday()) % 7)
    return datetime(day.year, day.month, day.day, 17, tzinfo=ZoneInfo("Europe/Berlin")).isoformat()


HEALTH_GATE = """\
  # Every dev cluster must run the commit healthy (rolled out, nodes Ready, stacks complete)
  # for stable_for; 0s keeps the demo short, 10m is usual.
  healthy_in_source: {stable_for: 0s, progress_deadline: 30m}
"""


def health_story(demo: Demo, b: ConfigRepoBuilder) -> None:
    """dev runs a crash-looping image, and alpha's health gate refuses it until it is fixed."""
    run = demo.clmgit
    say("alpha also gates on health (gates.healthy_in_source in channels/alpha.yaml); "
        "`clmgit health` looks at dev-1 now and records the verdict")
    alpha = b.git("show", "main:channels/alpha.yaml") + "\n"
    alpha = alpha.replace("  applied_in_source: true\n",
                          "  applied_in_source: true\n" + HEALTH_GATE)
    b.commit("main", {"channels/alpha.yaml": alpha}, "Gate alpha on the health of dev")
    run("health", "--channel", "dev", expect=4)  # unhealthy: clmgit health exits 4
    say("The gate refuses, naming the cluster, the object and the reason")
    run("promote", "dev", "alpha", expect=1)
    echo = b.git("show", "dev:cluster/manifests/platform/echo.yaml") + "\n"
    say("The fix lands on dev; reconcile applies it and observes dev-1 healthy again")
    b.commit("dev", {"cluster/manifests/platform/echo.yaml": _tag(echo, "1.4")},
             "echo: fixed image")
    run("reconcile", "--channel", "dev")
    run("health", "--channel", "dev")


def _tag(manifest: str, tag: str) -> str:
    """The echo manifest with its image tagged `tag`."""
    import re

    return re.sub(r"(image: \"?[^\s\"]+:)[^\s\"]+", rf"\g<1>{tag}", manifest)


if __name__ == "__main__":
    sys.exit(main())
