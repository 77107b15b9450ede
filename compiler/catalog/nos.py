"""The NOS registry: every network operating system clusterc writes switch configs for,
one descriptor each in data/nos.yaml (port naming key, files and their templates, port
MTU, device types, capabilities, lab kinds and images). The spec's allowed `nos` values, its
JSON Schema enum, the plan schema's enum, the error hints, the switch-config file list, the
lab files (render/interop.py) and the NOS port names all come from here,
so a NOS is one entry, not a list copied into every stage.

Built in only: a user catalog adds switch models (which list the NOSes they run), not
NOSes, because a NOS needs templates shipped with the compiler.
"""

from __future__ import annotations

import functools
from importlib import resources

import yaml

from ..diagnostics import nearest
from .models import Nos, Switch

# The digital twin (compiler/twin) boots FRR's daemons whatever the spec's NOS, so every
# Ethernet plan also carries FRR's port names (the twin's Linux interface names).
TWIN_NOS = "frr"


@functools.cache
def nos_registry() -> dict[str, Nos]:
    """NOS id -> descriptor, in file order (the order hints and the JSON Schema list them)."""
    text = (resources.files(__package__) / "data" / "nos.yaml").read_text(encoding="utf-8")
    registry: dict[str, Nos] = {}
    for entry in yaml.safe_load(text)["nos"]:
        nos = Nos.model_validate(entry)  # ours: a bad entry is a bug and raises
        if nos.id in registry:
            raise RuntimeError(f"data/nos.yaml: NOS '{nos.id}' is listed twice")
        registry[nos.id] = nos
    if TWIN_NOS not in registry:
        raise RuntimeError(f"data/nos.yaml: the digital twin's NOS '{TWIN_NOS}' is missing")
    return registry


def nos_ids() -> tuple[str, ...]:
    return tuple(nos_registry())


# The plan schema's NOS field as the committed file holds it (null only: no NOS list kept by
# hand); plan_schema_text() puts the registry's ids in front of the null.
PLAN_SCHEMA_NOS = '"nos": {"enum": [null]}'


def plan_schema_text(committed: str) -> str:
    """plan.schema.json with the NOS enum the registry gives (its ids, then null for a plan
    without switch configs), in the registry's order."""
    if committed.count(PLAN_SCHEMA_NOS) != 1:
        raise RuntimeError(f"plan.schema.json: expected one {PLAN_SCHEMA_NOS} to fill in")
    ids = ", ".join(f'"{i}"' for i in nos_ids())
    return committed.replace(PLAN_SCHEMA_NOS, '"nos": {"enum": [' + ids + ', null]}')


def descriptor(nos_id: str) -> Nos:
    return nos_registry()[nos_id]


def _listed(ids) -> str:
    registry = nos_registry()
    return ", ".join(f"{i} ({registry[i].name})" if i in registry else i for i in ids)


def unknown_nos_hint(value: str) -> str:
    close = nearest(value.lower(), nos_ids())
    allowed = "allowed: " + _listed(nos_ids())
    return f"{close} {allowed}" if close.startswith("did you mean") else allowed


def unsupported_nos(switch: Switch, nos: str, switches: dict[str, Switch]) -> tuple[str, str]:
    """(message, hint) for a NOS the switch model does not run: what it runs, and which
    catalog switches run the NOS asked for."""
    runs = ", ".join(switch.nos) or "none known"
    message = f"{switch.id} does not run {nos} (catalog: {runs})"
    others = sorted(s.id for s in switches.values() if nos in s.nos)
    elsewhere = (f"{nos} ({descriptor(nos).name}) runs on {', '.join(others)}" if others
                 else f"no catalog switch lists {nos}")
    hint = f"use one of: {runs}; or a switch that runs it: {elsewhere}" if switch.nos else \
        f"choose a switch whose catalog entry lists this NOS: {elsewhere}"
    return message, hint


def switch_nos_problems(switch: Switch) -> list[tuple[tuple, str, str]]:
    """(path in the switch's entry, message, hint) for each NOS a switch model lists that is
    not registered or not of its protocol, and each port-name key no NOS uses (a typo there
    would silently fall back to panel names)."""
    registry = nos_registry()
    keys = sorted({n.port_names for n in registry.values()})
    out: list[tuple[tuple, str, str]] = []
    for i, nos in enumerate(switch.nos):
        if nos not in registry:
            out.append((("nos", i), f"switch '{switch.id}' runs unknown NOS '{nos}'", unknown_nos_hint(nos)))
        elif registry[nos].protocol != switch.protocol:
            out.append((("nos", i), f"switch '{switch.id}' is {switch.protocol}; {nos} configures "
                        f"{registry[nos].protocol} switches", f"remove {nos} from its nos list"))
    for key in switch.nos_port_names:
        if key not in keys:
            out.append((("nos_port_names", key), f"switch '{switch.id}' nos_port_names key '{key}' is no NOS's naming key",
                        nearest(key, keys)))
    return out
