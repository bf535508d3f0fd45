"""A rendered cluster as files, one per object: written under a directory, or as one text for
stdout. The layout (relative paths):

    stacks/<stack name>.yaml                    the main stack, then cf-manifests/ stacks
    node-pools/<stack name>.yaml                one per node pool
    deletions/kubernetes.yaml                   pre_apply/post_apply, when there are any
    deletions/cloudformation.yaml
    manifests/<component>/<kind>_<namespace>_<name>.yaml   (<kind>_<name>.yaml if cluster-wide)

Objects are written as YAML in their own key order, multi-line strings as literal blocks, so
that a diff between two renders is readable. Secret-looking config values are masked unless
asked otherwise.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from clmgit.config.render import ManifestObject, RenderedCluster
from clmgit.config.secrets import masker_for
from clmgit.errors import ConfigError

MARKER = ".clmgit-render"
_BASE_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BASE_DUMPER):  # type: ignore[misc, valid-type]  # a base chosen at import
    pass


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


@dataclass(frozen=True)
class RenderedFile:
    path: str
    text: str


def rendered_files(rendered: RenderedCluster, *, mask: bool = True) -> list[RenderedFile]:
    """Every file of the layout, in the order the engine applies them."""
    masker = masker_for(rendered.cluster) if mask else None
    files = list(_files(rendered))
    if masker is None:
        return files
    return [RenderedFile(f.path, masker(f.text)) for f in files]


def _files(rendered: RenderedCluster) -> Iterator[RenderedFile]:
    for stack in rendered.stacks:
        yield RenderedFile(f"stacks/{_safe(stack.name)}.yaml", _with_newline(stack.text))
    for stack in rendered.node_pool_stacks:
        yield RenderedFile(f"node-pools/{_safe(stack.name)}.yaml", _with_newline(stack.text))
    for name, deletions in (("kubernetes", rendered.deletions),
                            ("cloudformation", rendered.cf_deletions)):
        if deletions:
            yield RenderedFile(f"deletions/{name}.yaml", dump_yaml(deletions.to_dict()))
    for component in rendered.manifests:
        seen: set[str] = set()
        for obj in component.objects:
            path = _unique(f"manifests/{_safe(component.name)}/{object_file_name(obj)}", seen)
            yield RenderedFile(path, dump_yaml(obj.obj))


def object_file_name(obj: ManifestObject) -> str:
    parts = [obj.kind.lower(), obj.namespace, obj.name]
    return _safe("_".join(p for p in parts if p)) + ".yaml"


def _unique(path: str, seen: set[str]) -> str:
    """The same object twice in a component keeps both files: the second gets a number."""
    stem, candidate, number = path.removesuffix(".yaml"), path, 1
    while candidate in seen:
        number += 1
        candidate = f"{stem}-{number}.yaml"
    seen.add(candidate)
    return candidate


def _safe(name: str) -> str:
    return name.replace("/", "%2F").replace("\0", "") or "_"


def _with_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def dump_yaml(data: Any) -> str:
    text: str = yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                          allow_unicode=True, width=1_000_000)
    return text


def render_text(rendered: RenderedCluster, *, mask: bool = True) -> str:
    """All files as one multi-document text, each headed by its path (for stdout)."""
    return "".join(f"---\n# Source: {f.path}\n{f.text}"
                   for f in rendered_files(rendered, mask=mask))


def render_to_files(rendered: RenderedCluster, out_dir: str | Path, *,
                    mask: bool = True) -> list[str]:
    """Write the files under `out_dir`, replacing a previous render there; returns their paths.

    The files are written beside `out_dir` first and moved into place at the end, so a failure
    leaves `out_dir` as it was. A directory that holds anything but an earlier render is refused.
    """
    out = Path(out_dir)
    _check_replaceable(out)
    files = rendered_files(rendered, mask=mask)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        for f in files:
            target = staging / f.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f.text)
        (staging / MARKER).write_text(f"{rendered.cluster.id} {rendered.sha}\n")
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [f.path for f in files]


def _check_replaceable(out: Path) -> None:
    if not out.exists():
        return
    if not out.is_dir():
        raise ConfigError(f"{out} is a file; choose a directory for --out")
    if any(out.iterdir()) and not (out / MARKER).exists():
        raise ConfigError(f"{out} is not empty and holds no earlier render; choose another --out")
