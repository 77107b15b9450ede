"""Load the built-in catalog and a user's catalog file into one lookup."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ValidationError
from typing import Any

from ..diagnostics import Diagnostic, SpecInvalid, nearest
from ..yaml12.value_errors import describe
from ..yaml12 import Source, load_yaml_file, load_yaml_text
from .models import Cable, HostTopology, Media, ScaleUpPart, Server, Switch, Transceiver
from .nos import switch_nos_problems

_SECTIONS: dict[str, tuple[type[BaseModel], str]] = {
    "servers": (Server, "id"),
    "switches": (Switch, "id"),
    "transceivers": (Transceiver, "id"),
    "cables": (Cable, "id"),
    "media": (Media, "id"),
    "host_topology": (HostTopology, "id"),
    "scale_up_parts": (ScaleUpPart, "id"),
}


@dataclass
class Catalog:
    servers: dict[str, Server] = field(default_factory=dict)
    switches: dict[str, Switch] = field(default_factory=dict)
    transceivers: dict[str, Transceiver] = field(default_factory=dict)
    cables: dict[str, Cable] = field(default_factory=dict)
    media: dict[str, Media] = field(default_factory=dict)
    host_topology: dict[str, HostTopology] = field(default_factory=dict)  # by server or VM type id
    scale_up_parts: dict[str, ScaleUpPart] = field(default_factory=dict)  # NVLink switch trays, backplanes

    def transceiver_for(self, fiber: str, form_factor: str, top: str, cage_gbps: int, serdes_gbps: int) -> Transceiver | None:
        """The transceiver that fits a cage (its form, top, bandwidth and lane rate) for a
        fiber kind; first by id for determinism."""
        for key in sorted(self.transceivers):
            t = self.transceivers[key]
            if (t.fiber, t.form_factor, t.top, t.cage_gbps, t.serdes_gbps) == (fiber, form_factor, top, cage_gbps, serdes_gbps):
                return t
        return None


def _merge(catalog: Catalog, source: Source, diagnostics: list[Diagnostic]) -> None:
    data = source.data
    if data is None:
        return
    if not isinstance(data, dict):
        diagnostics.append(Diagnostic("CATALOG_INVALID", "a catalog file is a mapping of sections", file=source.file, line=1, column=1))
        return
    for section, entries in data.items():
        if section not in _SECTIONS:
            line, col = source.where((section,))
            diagnostics.append(
                Diagnostic("CATALOG_UNKNOWN_SECTION", f"unknown catalog section '{section}'", path=section,
                           file=source.file, line=line, column=col, hint="sections: " + ", ".join(_SECTIONS))
            )
            continue
        model, key = _SECTIONS[section]
        if not isinstance(entries, list):
            line, col = source.where((section,))
            diagnostics.append(Diagnostic("CATALOG_INVALID", f"'{section}' must be a list", path=section,
                                          file=source.file, line=line, column=col))
            continue
        table = getattr(catalog, section)
        for i, entry in enumerate(entries):
            try:
                item = model.model_validate(entry)
            except ValidationError as exc:
                for err in exc.errors():
                    loc = (section, i) + tuple(err["loc"])
                    line, col = source.where(loc)
                    msg, hint = describe(err, loc, source) or (err["msg"], "")
                    diagnostics.append(
                        Diagnostic("CATALOG_INVALID", msg, path=".".join(map(str, loc)),
                                   file=source.file, line=line, column=col, hint=hint)
                    )
                continue
            problems = switch_nos_problems(item) if isinstance(item, Switch) else []
            for where, message, hint in problems:
                loc = (section, i) + where
                line, col = source.where(loc)
                diagnostics.append(Diagnostic("CATALOG_INVALID", message, path=".".join(map(str, loc)),
                                              file=source.file, line=line, column=col, hint=hint))
            if problems:
                continue
            table[getattr(item, key)] = item  # a later file overrides by id


def load_catalog(user_file: str | Path | None = None) -> Catalog:
    """The built-in catalog, extended or overridden by `user_file` if given."""
    catalog = Catalog()
    diagnostics: list[Diagnostic] = []
    data_dir = resources.files(__package__) / "data"
    names = ["servers.yaml", "switches.yaml", "media.yaml", "scale_up.yaml"]
    names += sorted(f"host_topology/{p.name}" for p in (data_dir / "host_topology").iterdir() if p.name.endswith(".yaml"))
    for name in names:
        _merge(catalog, _builtin_source(name), diagnostics)
    diagnostics += _scale_up_references(catalog)
    if diagnostics:  # the built-in catalog is ours: a problem there is a bug
        raise RuntimeError("built-in catalog invalid:\n" + "\n".join(d.format() for d in diagnostics))
    if user_file is not None:
        source = load_yaml_file(user_file)
        _merge(catalog, source, diagnostics)
        diagnostics += _scale_up_references(catalog, source.file)
        if diagnostics:
            raise SpecInvalid(diagnostics)
    return catalog


@functools.cache
def _builtin_source(name: str) -> Source:
    """A built-in catalog file, parsed once per process: the package's data does not change
    while it runs, and parsing with positions is most of what loading the catalog costs
    (~30 ms, paid by every compile; a process that compiles many specs, as `explore` and the
    test suite do, paid it each time). The parsed tree is only read (_merge validates it
    into new records), so each Catalog is still its own."""
    text = (resources.files(__package__) / "data" / name).read_text(encoding="utf-8")
    return load_yaml_text(text, f"<builtin>/{name}")


def _scale_up_references(catalog: Catalog, file: str | None = None) -> list[Diagnostic]:
    """Every switch tray / backplane a server's scale_up names is a scale_up_parts entry of that kind."""
    out = []
    for server in catalog.servers.values():
        up = server.scale_up
        for field_name, kind in (("switch_tray", "switch-tray"), ("backplane", "backplane")):
            ref = getattr(up, field_name) if up else None
            if ref is not None and (ref not in catalog.scale_up_parts or catalog.scale_up_parts[ref].kind != kind):
                out.append(Diagnostic("CATALOG_INVALID", f"server '{server.id}' scale_up.{field_name} '{ref}' is not a "
                                      f"{kind} in scale_up_parts", path=f"servers.{server.id}.scale_up.{field_name}",
                                      file=file or "", hint=nearest(ref, catalog.scale_up_parts)))
        if up and (up.switch_tray is None) != (up.switch_trays_per_domain is None):
            out.append(Diagnostic("CATALOG_INVALID", f"server '{server.id}': scale_up.switch_tray and "
                                  "switch_trays_per_domain go together", path=f"servers.{server.id}.scale_up", file=file or ""))
    return out


def roce_profile_data() -> dict:
    """The built-in RoCE profile (data/roce.yaml: lossless class, DSCP, PFC, ECN, MTU) as
    plain values, read with the spec's YAML 1.2 loader like every catalog file. One
    profile for every output that speaks RoCE, so switches and hosts cannot disagree."""
    text = (resources.files("compiler.catalog") / "data" / "roce.yaml").read_text(encoding="utf-8")
    data: Any = load_yaml_text(text, "<builtin>/roce.yaml").data
    return dict(data["roce_profile"])


def monitoring_defaults() -> dict:
    """The built-in monitoring settings (data/monitoring.yaml: exporters, scrape intervals,
    alert thresholds) as plain values, read like every catalog file."""
    text = (resources.files("compiler.catalog") / "data" / "monitoring.yaml").read_text(encoding="utf-8")
    data: Any = load_yaml_text(text, "<builtin>/monitoring.yaml").data
    return dict(data["monitoring"])


def failure_rate_defaults() -> dict:
    """The built-in failure rates per component class (data/failure_rates.yaml: afr per
    component-year, mttr_hours, and their sources) as plain values, read like every catalog file."""
    text = (resources.files("compiler.catalog") / "data" / "failure_rates.yaml").read_text(encoding="utf-8")
    data: Any = load_yaml_text(text, "<builtin>/failure_rates.yaml").data
    return {k: dict(v) for k, v in data["failure_rates"].items()}
