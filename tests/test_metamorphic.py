"""Metamorphic tests (issue 12, "No silent wrong answers").

A compiler's worst bugs pass every "does it crash" test: the plan is produced, it is
just wrong. These tests never state what the right plan is; they state relations that
must hold between plans of related specs, over hundreds of generated specs:

1. the same design written differently gives a byte-identical plan.json;
2. more oversubscription never costs more; more GPUs never fewer switches;
3. growth only adds (clusterc's own diff finds nothing removed or moved);
4. summary.json, cabling.csv and bom.csv agree on every count;
5. plan.json loaded and rendered again gives the same files;
6. renaming a design or reordering lists whose order means nothing changes no count.

A spec the compiler refuses must be refused the same way in every spelling, with
diagnostics that point at a place in the file (never a traceback, never exit 0).

Examples per run are fixed (`derandomize=True`, no example database), so CI sees the
same specs every time; the count per test is `max_examples` below (test_count_of_examples
prints the total).
"""

from __future__ import annotations

import collections
import copy
import csv
import io
import json
import os
import random
import re
import tempfile
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from compiler.diagnostics import SpecInvalid
from compiler.pipeline import build_plan, write_outputs
from compiler.plan.bom import NOT_IN_CATALOG, bill_of_materials
from compiler.plan.diff import diff_plans
from compiler.plan.serialize import plan_from_json, plan_json_text
from compiler.render import RENDERERS
from compiler.spec.model import FAMILY_KEYS, ExtraFabric, Oversubscription, Ratio, Spec, extra_fabric_pools

from .conftest import ROOT, cli_in_process, scratch_dir, shared_outputs, shared_plan, tree_bytes
from .metamorphic_specs import (CATALOG, RATIOS, any_specs, clos_specs, direct_specs, dragonfly_specs, layout_specs,
                                planes_specs, ratio_of, shuffled, spec_yaml, torus_specs, unquote_ratios, with_layout, write_spec)

# One profile for every test: deterministic examples, no timing, no example database
# (a stored failure replayed first would make two CI runs differ).
EXAMPLES = {"equivalence": 30, "defaults": 25, "order": 15, "ratio": 15, "monotone": 15, "gpus": 15, "growth": 12,
            "consistency": 30, "layout": 12, "round_trip": 20, "rename": 10, "permute": 10, "invalid": 8, "only": 15}


# For a bug hunt by hand: CLUSTERC_METAMORPHIC_SCALE=10 pytest tests/test_metamorphic.py
SCALE = float(os.environ.get("CLUSTERC_METAMORPHIC_SCALE", "1"))


def profile(kind: str):
    return settings(max_examples=max(1, int(EXAMPLES[kind] * SCALE)), deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.function_scoped_fixture])


def work() -> Path:
    """The folder the generated specs and their outputs are written to (one per session)."""
    return scratch_dir("metamorphic")


# Diagnostics known to come without file and line (extra endpoints, owned elsewhere;
# test_no_free_ports_diagnostic_points_at_the_spec flips when they get one).
PLACELESS = {"DESIGN_NO_FREE_PORTS"}


# --------------------------------------------------------------------------------------
# Compiling and comparing


def compile_text(text: str):
    """The plan of a spec text, or the SpecInvalid the compiler raised for it (after
    checking its diagnostics point somewhere: a user must be able to find the problem)."""
    path = write_spec(work(), text)
    try:
        return build_plan(path)[1]
    except SpecInvalid as exc:
        assert exc.diagnostics, f"SpecInvalid without a diagnostic for:\n{text}"
        for d in exc.diagnostics:
            assert d.code and d.message, d
            if d.code not in PLACELESS:
                assert d.file == str(path) and d.line >= 1 and d.column >= 1, f"diagnostic without a place: {d.format()}\n{text}"
        return exc


def compile_spec(spec: dict):
    return compile_text(spec_yaml(spec))


def codes(result) -> list[str]:
    return sorted(d.code for d in result.diagnostics)


def assert_same_design(text_a: str, text_b: str, ignore_notes: tuple[str, ...] = (),
                       ignore_alternatives: bool = False, ignore_design: tuple[str, ...] = ()) -> None:
    """Both spellings compile to a byte-identical plan.json, or both are refused alike.
    `ignore_alternatives`: leave out the unit sizes the design record prices for comparison
    (design.unit_fill cheapest / whole_units / with_room), which follow what the spec leaves
    open; `ignore_design`: design record keys ("unit_fill.given") that differ by spelling."""
    ignored = list(ignore_design) + (["unit_fill.cheapest", "unit_fill.whole_units", "unit_fill.with_room"]
                                     if ignore_alternatives else [])
    a, b = compile_text(text_a), compile_text(text_b)
    if isinstance(a, SpecInvalid) or isinstance(b, SpecInvalid):
        assert isinstance(a, SpecInvalid) and isinstance(b, SpecInvalid), (
            f"one spelling compiles, the other is refused:\n--- A\n{text_a}--- B\n{text_b}"
            f"{a if isinstance(a, SpecInvalid) else ''}{b if isinstance(b, SpecInvalid) else ''}")
        assert codes(a) == codes(b), f"refused differently:\n{a}\n---\n{b}"
        return
    for plan in (a, b):
        plan.notes = [n for n in plan.notes if not n.startswith(ignore_notes)]
        for key in ignored:
            *path, last = key.split(".")
            record = plan.design
            for k in path:
                record = record.get(k) or {}
            record.pop(last, None)
    ja, jb = plan_json_text(a), plan_json_text(b)
    if ja != jb:
        import difflib

        diff = "\n".join(list(difflib.unified_diff(ja.splitlines(), jb.splitlines(), "A", "B", lineterm="", n=1))[:40])
        pytest.fail(f"same design, different plan.json:\n--- A\n{text_a}--- B\n{text_b}{diff}")


def outputs(plan, only: list[str] | None = None) -> dict[str, bytes]:
    """Every file the renderers write for `plan` (or the `only` ones), by relative path."""
    out = Path(tempfile.mkdtemp(dir=work()))
    target = write_outputs(plan, out, only)
    return {str(p.relative_to(target)): p.read_bytes() for p in sorted(target.rglob("*")) if p.is_file()}


def counts(plan) -> dict[str, int]:
    """What a design costs: switches per tier and in all, field cables, transceivers."""
    pulled = [plan.facts["media"][m].get("field_cable", True) for m in plan.media]
    bom = bill_of_materials(plan)
    roles = collections.Counter(d.role for d in plan.devices if d.tier > 0)
    return {"rounded": any(n.startswith(("spines rounded up", "cores per group rounded up")) for n in plan.notes),
            "switches": sum(roles.values()), "leaf": roles.get("leaf", 0),
            "upper": sum(n for r, n in roles.items() if r != "leaf"),
            "cables": int(sum(pulled[m] for m in plan.links.media.tolist())),
            "transceivers": sum(line.quantity for line in bom if line.category == "transceiver")}


# --------------------------------------------------------------------------------------
# Spelling a spec differently


def plain(value):
    """A model default as a spec author would write it (ratios and prefixes as text)."""
    if isinstance(value, Ratio):
        return str(value)
    if isinstance(value, BaseModel):
        return {k: plain(getattr(value, k)) for k in type(value).model_fields}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)  # IPv4Network


def _model_of(annotation) -> type[BaseModel] | None:
    for cand in (annotation, *getattr(annotation, "__args__", ())):
        for inner in (cand, *getattr(cand, "__args__", ())):
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                return inner
    return None


def _is_list(annotation) -> bool:
    """list[X], or list[X] | None (an optional list section such as requirements.traffic)."""
    return getattr(annotation, "__origin__", None) is list or any(
        getattr(a, "__origin__", None) is list for a in getattr(annotation, "__args__", ()))


def written_defaults(data, model: type[BaseModel], topology: str | None = None, index: int = 0):
    """`data` with every key the model defaults (to a value other than None) written out,
    recursively, as the default. Keys a topology family does not take stay out (they are
    an error there); an extra fabric's pools are its own (the k-th /13 of 10.192/10)."""
    if model is Oversubscription and isinstance(data, str):
        data = {"leaf": data}
    if not isinstance(data, dict):
        return data
    out = dict(data)
    if model is Spec:
        topology = data["fabric"]["topology"]
    for name, field in model.model_fields.items():
        if model.__name__ == "Fabric" and name in FAMILY_KEYS and topology not in FAMILY_KEYS[name]:
            continue
        if name not in out and not field.is_required():
            default = field.get_default(call_default_factory=True)
            if model is ExtraFabric and name == "addressing":
                default = {k: str(v) for k, v in extra_fabric_pools(index).items()} | {
                    "peering": "numbered", "asn": "auto"}
            if default is None:
                continue
            out[name] = plain(default)
        inner = _model_of(field.annotation)
        if inner is None or name not in out:
            continue
        if _is_list(field.annotation):
            out[name] = [written_defaults(v, inner, topology, i) for i, v in enumerate(out[name])]
        else:
            out[name] = written_defaults(out[name], inner, topology, index)
    return out


def defaulted_paths(model: type[BaseModel] = Spec, prefix: str = "") -> set[str]:
    """Every key path the spec language defaults to something other than None."""
    out = set()
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        if not field.is_required() and field.get_default(call_default_factory=True) is not None:
            out.add(path)
        inner = _model_of(field.annotation)
        if inner is not None and inner is not Ratio:
            out |= defaulted_paths(inner, path + ("[]." if _is_list(field.annotation) else "."))
    return out


def written_paths(data, prefix: str = "") -> set[str]:
    out = set()
    if isinstance(data, dict):
        for k, v in data.items():
            out.add(f"{prefix}{k}")
            out |= written_paths(v, f"{prefix}{k}.")
    elif isinstance(data, list):
        for v in data:
            out |= written_paths(v, prefix[:-1] + "[].")
    return out


def servers_as_gpus(spec: dict) -> dict:
    out = copy.deepcopy(spec)
    gpus = CATALOG.servers[spec["server"]].gpus
    if "servers" in out:
        out["gpus"] = out.pop("servers") * gpus
    else:
        out["servers"] = out.pop("gpus") // gpus
    return out


def with_ratio(spec: dict, ratio) -> dict:
    out = copy.deepcopy(spec)
    out["fabric"]["oversubscription"] = ratio
    return out


def reduced(text: str) -> str:
    f = Fraction(*ratio_of(text))
    return f"{f.numerator}:{f.denominator}"


# --------------------------------------------------------------------------------------
# 1. The same design written two ways


@profile("equivalence")
@given(any_specs())
def test_gpus_or_servers_give_the_same_plan(spec):
    assert_same_design(spec_yaml(spec), spec_yaml(servers_as_gpus(spec)))


@profile("defaults")
@given(st.one_of(any_specs(), layout_specs()))
def test_defaults_written_out_give_the_same_plan(spec):
    full = written_defaults(spec, Spec)
    assert_same_design(spec_yaml(spec), spec_yaml(full))


def test_written_defaults_cover_every_default_of_the_spec_language():
    """The test above writes out every defaulted key model.py has: a default added later
    is exercised without anyone editing this file (or this test says which is missing)."""
    spec = {"name": "x", "servers": 1, "server": "dgx-h100",
            "fabric": {"topology": "rail-optimized", "switch": "qm9700"},
            "fabrics": [{"name": "storage", "switch": "sn5600", "extra_endpoints": [{"role": "vast", "count": 1}]}],
            "extra_endpoints": [{"role": "ufm", "count": 1}], "layout": {"rows": 1, "racks_per_row": 1},
            "requirements": {"survive": {}, "availability": {}, "traffic": [{"pattern": "all-to-all", "routing": "adaptive",
                                                           "min_fraction": 0.5, "measure": "mean"}]}, "bom": {}}
    torus = {"name": "x", "servers": 1, "server": "dgx-h100", "fabric": {"topology": "torus", "switch": "qm9700", "dims": [2]}}
    dragonfly = {"name": "x", "servers": 1, "server": "dgx-h100", "fabric": {"topology": "dragonfly", "switch": "qm9700"}}
    written = (written_paths(written_defaults(spec, Spec)) | written_paths(written_defaults(torus, Spec))
               | written_paths(written_defaults(dragonfly, Spec)))
    missing = defaulted_paths() - written
    assert not missing, f"defaults never written out by the metamorphic test: {sorted(missing)}"
    # and the list is the real one: these are defaults a spec author can rely on
    assert {"fabric.tiers", "fabric.oversubscription", "fabric.links_per_neighbor", "collectives.latency_us",
            "layout.rack.height_u", "fabrics[].addressing", "extra_endpoints[].ports"} <= defaulted_paths()


# Defaults the compiler resolves itself (None in the model): written out as the value it
# picks, the plan is the same; a note saying "not given" may go.
@profile("defaults")
@given(st.one_of(clos_specs(), planes_specs(), torus_specs(), dragonfly_specs(), direct_specs()))
def test_resolved_defaults_written_out_give_the_same_plan(spec):
    plan = compile_spec(spec)
    assume(not isinstance(plan, SpecInvalid))
    d, f = plan.design, copy.deepcopy(spec["fabric"])
    used = {plan.media[m] for m in set(plan.links.media.tolist())} - {"board", "ici"}
    if len(used) == 1 and not plan.design.get("fabrics"):  # the medium picked for every link
        f.setdefault("media", used.pop())
    nics = CATALOG.servers[spec["server"]].nic_groups.get("compute")
    if nics is not None:
        f.setdefault("speed_gbps", d["speed_gbps"])
    topology = f["topology"]
    if topology in ("fat-tree", "rail-optimized"):
        f.setdefault("spine_switch", f["switch"])
        f.setdefault("uplink_speed_gbps", d.get("uplink_speed_gbps", d["speed_gbps"]))  # one speed: speed_gbps
        if d["tiers"] == 3:
            f.setdefault("core_switch", f.get("spine_switch", f["switch"]))
        if d["scalable_unit"]:
            f.setdefault("scalable_unit", d["scalable_unit"])
        leaf, asked = d["leaf_ports"], Fraction(*ratio_of(d["oversubscription"]["leaf"]))
        if d["tiers"] == 1:  # one switch: no uplinks, no ratio to measure
            f.setdefault("tiers", 1)
        elif Fraction(leaf["down"], leaf["up"]) != asked:
            # The default leaf measures below the ratio asked (expand/unit_choice.py): the
            # ratio it measures is then part of the unit, as the note says to write it.
            measured = Fraction(leaf["down"], leaf["up"])
            text = f"{measured.numerator}:{measured.denominator}"
            given = f.get("oversubscription")
            f["oversubscription"] = {**given, "leaf": text} if isinstance(given, dict) else text
    elif topology in ("torus", "mesh"):
        f.setdefault("wrap", [topology == "torus"] * len(f["dims"]))
    elif topology in ("dragonfly", "dragonfly+"):
        f.setdefault("intra_group", "fat-tree" if topology == "dragonfly+" else "all-to-all")
        f.setdefault("global_arrangement", d["global_arrangement"])
        for key in ("groups", "switches_per_group", "endpoints_per_switch", "global_ports_per_switch",
                    "global_links_per_group_pair"):
            if d[key]:  # one group has no global links: nothing to write
                f.setdefault(key, d[key])
    elif topology == "multi-plane":
        f.setdefault("planes", d["planes"])
        f.setdefault("uplink_speed_gbps", d["uplink_speed_gbps"])
    full = copy.deepcopy(spec) | {"fabric": f}
    for e in full.get("extra_endpoints", []):
        e.setdefault("speed_gbps", d["speed_gbps"])
    for x in full.get("fabrics", []):
        x.setdefault("nic_group", x["name"])
    # The unit written out is given, not chosen; the ratio asked is the spec's own.
    assert_same_design(spec_yaml(spec), spec_yaml(full), ignore_notes=("scalable_unit not given", "servers_per_leaf not given",
                                                                      "switches_per_group not given"),
                       ignore_design=("unit_fill.given", "oversubscription.leaf"))


@profile("defaults")
@given(clos_specs(tiers="auto"))
def test_auto_tiers_equal_the_tiers_auto_picks(spec):
    """`tiers: auto` is the fewest tiers that fit: writing that number gives the same plan
    (the growth note may differ: with tiers fixed, growing ends where the tiers run out;
    so may the unit sizes priced for comparison: with tiers: auto a cheaper unit may fit in
    fewer tiers, e.g. 33 DGX B300 in SUs of 4 take 3 tiers where SUs of 20 take 2)."""
    plan = compile_spec(spec)
    assume(not isinstance(plan, SpecInvalid))
    fixed = copy.deepcopy(spec)
    fixed["fabric"]["tiers"] = plan.design["tiers"]
    assert_same_design(spec_yaml(spec), spec_yaml(fixed), ignore_notes=("grows to", "scalable_unit", "servers_per_leaf"),
                       ignore_alternatives=True)


@profile("order")
@given(any_specs(), st.integers(0, 2**32 - 1))
def test_key_order_does_not_matter(spec, seed):
    assert_same_design(spec_yaml(spec), spec_yaml(shuffled(written_defaults(spec, Spec), random.Random(seed))))
    assert_same_design(spec_yaml(spec), spec_yaml(spec, flow=True))


def _ratio_specs():
    return st.one_of(clos_specs(with_extras=False), planes_specs()).filter(
        lambda s: "oversubscription" in s["fabric"])


@profile("ratio")
@given(_ratio_specs())
def test_ratio_as_text_or_leaf_map(spec):
    ratio = spec["fabric"]["oversubscription"]
    assert_same_design(spec_yaml(spec), spec_yaml(with_ratio(spec, {"leaf": ratio})))
    assert_same_design(spec_yaml(spec), spec_yaml(with_ratio(spec, {"leaf": ratio, "spine": "1:1"})))
    assert_same_design(spec_yaml(spec), spec_yaml(with_ratio(spec, f" {ratio.replace(':', ' : ')} ")))


@profile("ratio")
@given(_ratio_specs(), st.integers(2, 5))
def test_a_ratio_equals_its_multiples(spec, k):
    """2:2 is 1:1 and 4:2 is 2:1: a ratio is a ratio, however it is written."""
    down, up = ratio_of(spec["fabric"]["oversubscription"])
    assert_same_design(spec_yaml(spec), spec_yaml(with_ratio(spec, f"{k * down}:{k * up}")))


def test_unreduced_ratio_builds_the_reduced_design():
    """Regression: 3:3 built 30 down + 30 up of a 64-port leaf (sizing takes multiples of
    down + up) where 1:1 builds 32 + 32, and 4:2 built 40 + 20 where 2:1 builds 42 + 21:
    the same ratio, a leaf more and spines fewer."""
    spec = {"name": "mm", "servers": 40, "server": "hgx-h100", "fabric": {"topology": "fat-tree", "switch": "qm9700"}}
    for same, ratio in (("1:1", "3:3"), ("2:1", "4:2")):
        a, b = compile_spec(with_ratio(spec, same)), compile_spec(with_ratio(spec, ratio))
        # the leaf measures at or below the ratio asked (the default leaf may take more uplinks
        # where that is cheaper: 40 down + 21 up at 2:1 here, over 3 spines; 20 up would need 4)
        down, up = (int(x) for x in same.split(":"))
        ports = a.design["leaf_ports"]
        assert ports == b.design["leaf_ports"] and ports["down"] * up <= ports["up"] * down
        assert plan_json_text(a) == plan_json_text(b)


UNQUOTED = """name: unquoted
servers: 64
server: hgx-h100
fabric: {topology: fat-tree, switch: sn5600, speed_gbps: 400, oversubscription: 'RATIO'}
"""


@pytest.mark.parametrize("ratio", ["1:1", "2:1", "3:2", "16:15"])
def test_unquoted_ratio_is_the_same_design(ratio):
    text = UNQUOTED.replace("RATIO", ratio)
    assert_same_design(text, unquote_ratios(text))


# --------------------------------------------------------------------------------------
# 2. Monotonicity

RATIO_ORDER = sorted(RATIOS, key=lambda r: Fraction(*ratio_of(r)))


def _explicit_leaf_fill(spec: dict) -> bool:
    """The leaf's fill does not follow the ratio: rail SUs and fat-tree leaves given."""
    f = spec["fabric"]
    return "scalable_unit" in f if f["topology"] == "rail-optimized" else "servers_per_leaf" in f


def _oversubscription_series(spec: dict) -> list[tuple[str, dict]]:
    out = []
    for ratio in RATIO_ORDER:
        plan = compile_spec(with_ratio(spec, ratio))
        if not isinstance(plan, SpecInvalid):
            out.append((ratio, counts(plan)))
    return out


def _rising(series, keys, said_rounded: bool = False):
    """(lower ratio, higher ratio, key, numbers) wherever a higher ratio costs more;
    `said_rounded`: not where the higher ratio's plan says its switches were rounded up."""
    bad = []
    for (r1, c1), (r2, c2) in zip(series, series[1:]):
        for k in keys:
            if c2[k] > c1[k] and not (said_rounded and c2["rounded"] and k in ("upper", "switches")):
                bad.append((r1, r2, k, c1[k], c2[k]))
    return bad


@profile("monotone")
@given(clos_specs(with_extras=False).filter(_explicit_leaf_fill))
def test_more_oversubscription_never_costs_more(spec):
    """With the leaf's fill fixed (scalable_unit / servers_per_leaf given), a higher leaf
    ratio never needs more cables or transceivers, nor more spines or switches unless the
    plan says why: every leaf has equal links to every spine, so an uplink count like 9
    spreads over 1, 3 or 9 spines (36 GB200 trays, SU 18, QM9700: 2 spines at 3:2, 3 at
    2:1; the note "spines rounded up from 2 to 3" says so)."""
    series = _oversubscription_series(spec)
    bad = _rising(series, ("upper", "switches", "cables", "transceivers"), said_rounded=True)
    assert not bad, f"{spec_yaml(spec)}more oversubscription costs more: {bad}"


# Found with the default fill (scalable_unit or servers_per_leaf left out): the unit was
# chosen per ratio with uplinks at exactly that ratio, every leaf has equal links to every
# spine, so a higher ratio could land on an uplink count with a poor divisor (21, 25, 5
# spines) and cost more than a lower one. The default now takes any leaf at or below the
# ratio asked (expand/unit_choice.py), so each ratio's candidates hold every lower ratio's.
# Each: the spec, and what rose before.
DEFAULT_FILL_CASES = [
    # B200 SuperPOD, 4 SUs' worth without scalable_unit: 3:2 11 spines / 1,728 cables, 5:3 12 / 1,792
    pytest.param({"name": "mm", "servers": 128, "server": "dgx-b200",
                  "fabric": {"topology": "rail-optimized", "switch": "qm9700"}},
                 id="b200-128-qm9700-rail"),
    # one DGX H100 on SN5600 at 400G: 1:1 one spine / 16 cables, 3:2 two / 24, 5:3 (SU 10) two / 56
    pytest.param({"name": "mm", "servers": 1, "server": "dgx-h100",
                  "fabric": {"topology": "rail-optimized", "switch": "sn5600", "speed_gbps": 400}},
                 id="h100-1-sn5600-rail"),
    # fat tree, 64 HGX H100 on SN5600 at 400G: 3:1 2 spines (8 switches), 4:1 5 spines (11)
    pytest.param({"name": "mm", "servers": 64, "server": "hgx-h100",
                  "fabric": {"topology": "fat-tree", "switch": "sn5600", "speed_gbps": 400}},
                 id="hgx-64-sn5600-fat-tree"),
    # fat tree, 157 Gaudi 3 on SN5400 at 200G: 3:1 16 spines (56 switches), 4:1 25 spines (65)
    pytest.param({"name": "mm", "servers": 157, "server": "gaudi3-8",
                  "fabric": {"topology": "fat-tree", "switch": "sn5400"}},
                 id="gaudi3-157-sn5400-fat-tree"),
]


@pytest.mark.parametrize("spec", DEFAULT_FILL_CASES)
def test_more_oversubscription_never_costs_more_default_fill(spec):
    bad = _rising(_oversubscription_series(spec), ("upper", "switches", "cables", "transceivers"))
    assert not bad, f"{spec_yaml(spec)}more oversubscription costs more: {bad}"


def _ports(plan) -> int:
    """What the default unit weighs (expand/unit_choice.py): every port of every switch
    bought, and two ends per cable."""
    return sum(len(plan.layouts[d.layout]) for d in plan.devices if d.tier > 0) + 2 * len(plan.links.media)


@profile("monotone")
@given(clos_specs(with_extras=False).filter(lambda s: not _explicit_leaf_fill(s)))
def test_more_oversubscription_never_costs_more_ports_default_fill(spec):
    """With the default fill a leaf may measure below the ratio asked, so the candidates of
    a higher ratio hold every lower ratio's design and its cost in ports never rises. One
    item may still be traded for another where that saves ports (fewer leaves for more
    spines: unit_choice.py says why no choice keeps every item from rising); the cases
    above hold for every item. The leaf never measures above the ratio asked."""
    ports = []
    for ratio in RATIO_ORDER:
        plan = compile_spec(with_ratio(spec, ratio))
        if isinstance(plan, SpecInvalid):
            continue
        ports.append((ratio, _ports(plan)))
        leaf, (down, up) = plan.design["leaf_ports"], ratio_of(ratio)
        if plan.design["tiers"] > 1:  # one switch has no uplinks: non-blocking, no ratio to measure
            assert leaf["down"] * up <= leaf["up"] * down, f"{spec_yaml(spec)}leaf {leaf} above {ratio}"
    bad = [(a, b) for a, b in zip(ports, ports[1:]) if b[1] > a[1]]
    assert not bad, f"{spec_yaml(spec)}more oversubscription costs more ports: {bad}"


@profile("gpus")
@given(st.one_of(clos_specs(with_extras=False), dragonfly_specs(), planes_specs()), st.integers(1, 64))
def test_more_gpus_never_fewer_switches(spec, more):
    bigger = copy.deepcopy(spec)
    step = max(1, more * (18 if spec["server"] == "gb200-nvl72" else 1))
    bigger["servers"] += step * (spec["fabric"].get("scalable_unit", 1) if spec["fabric"]["topology"] == "multi-plane" else 1)
    a, b = compile_spec(spec), compile_spec(bigger)
    assume(not isinstance(a, SpecInvalid) and not isinstance(b, SpecInvalid))
    ca, cb = counts(a), counts(b)
    for k in ("switches", "leaf", "cables"):
        assert cb[k] >= ca[k], f"{spec_yaml(spec)}{spec['servers']} -> {bigger['servers']} servers: {k} {ca[k]} -> {cb[k]}"


# --------------------------------------------------------------------------------------
# 3. Growth only adds


@st.composite
def growth_series(draw):
    spec = draw(clos_specs(tiers=draw(st.sampled_from(["auto", "auto", 3]))))
    # Extra endpoints move when a new SU's leaves appear: test_growth_keeps_endpoint_cables.
    spec.pop("extra_endpoints", None)
    f = spec["fabric"]
    su = f.get("scalable_unit") or (18 if spec["server"] == "gb200-nvl72" else draw(st.sampled_from([8, 16, 32])))
    f["scalable_unit"] = su
    if f["topology"] == "fat-tree":
        f.pop("servers_per_leaf", None)
    steps = draw(st.integers(2, 6))
    final = su * steps
    sizes = sorted(set(draw(st.lists(st.integers(1, steps - 1), min_size=1, max_size=3)) + [steps]))
    sizes = [n * su for n in sizes]
    if spec["server"] != "gb200-nvl72" and draw(st.booleans()):
        sizes[0] = max(1, sizes[0] - draw(st.integers(1, su - 1)) if su > 1 else sizes[0])  # a partial SU
    growth = {"max_servers": final} if draw(st.booleans()) else {"max_scalable_units": steps}
    return spec, growth, sizes


@profile("growth")
@given(growth_series())
def test_growth_only_adds(case):
    spec, growth, sizes = case
    plans = []
    for n in sizes:
        plan = compile_spec(copy.deepcopy(spec) | {"servers": n, "growth": growth})
        if isinstance(plan, SpecInvalid):
            # The growth target decides feasibility, so one size refused means all are.
            assert not plans, f"{spec_yaml(spec)}growth: {growth}: {n} servers refused after {sizes[0]}: {plan}"
            assume(False)
        plans.append(plan)
    for old, new in zip(plans, plans[1:]):
        d = diff_plans(old, new)
        where = f"{spec_yaml(spec)}growth: {growth}: {old.design['servers']} -> {new.design['servers']} servers"
        assert d["devices"]["removed"] == [] and d["devices"]["changed"] == [], f"{where}: {d['devices']}"
        assert d["cables"]["removed"] == [], f"{where}: cables removed {d['cables']['removed'][:3]}"
        assert d["cables"]["changed"] == [], f"{where}: cables moved {d['cables']['changed'][:3]}"
        assert all(b["delta"] >= 0 for b in d["bom"]), f"{where}: BOM shrinks {d['bom']}"
    # At its final size a grown design is the design built for that size in one go.
    last = copy.deepcopy(spec) | {"servers": sizes[-1]}
    if sizes[-1] == (growth.get("max_servers") or growth["max_scalable_units"] * spec["fabric"]["scalable_unit"]):
        grown, direct = plans[-1], compile_spec(last)
        assert not isinstance(direct, SpecInvalid), direct
        assert counts(grown) == counts(direct), f"{spec_yaml(last)}grown {counts(grown)} vs built {counts(direct)}"


@pytest.mark.parametrize("attach,steps", [("leaf", (5, 6)), ("spine", (3, 5, 7))])
def test_growth_keeps_endpoint_cables(attach, steps):
    """Extra endpoints under planned growth: on leaves they take only slots no server takes
    at the growth target, on spines ports the final design leaves spare; every growth step
    keeps their cables (and every other) where they are. (Where today's leaves have no
    slot the target leaves free, the spec is refused with file:line, never re-plugged.)"""
    spec = {"name": "mm", "server": "dgx-b200",
            "extra_endpoints": [{"role": "ufm", "count": 1, "ports": 2, "attach": attach}],
            "fabric": {"topology": "fat-tree", "switch": "qm9700", "oversubscription": "1:1", "scalable_unit": 4},
            "growth": {"max_servers": steps[-1]}}
    plans = [compile_spec(spec | {"servers": n}) for n in steps]
    assert not any(isinstance(p, SpecInvalid) for p in plans), plans
    for old, new in zip(plans, plans[1:]):
        d = diff_plans(old, new)
        assert d["cables"]["changed"] == [] and d["cables"]["removed"] == [], d["cables"]
    refused = compile_spec(spec | {"servers": 3, "growth": {"max_servers": 7}} if attach == "leaf" else spec | {"servers": 1})
    if attach == "leaf":
        assert codes(refused) == ["DESIGN_NO_FREE_PORTS"] and refused.diagnostics[0].line >= 1


# --------------------------------------------------------------------------------------
# 4. summary.json, cabling.csv and bom.csv agree


def _fits(plan) -> dict[str, str]:
    return {m: plan.facts["media"][m]["fit"] for m in plan.media}


def _logical_ends(row: dict, side: str) -> list[tuple[str, str, str]]:
    """A cabling.csv row's (device, cage, transceiver) per logical link at one end: a
    column with several links holds their values `;`-separated, or one value for all."""
    n = len(row["links"].split(";"))
    cols = [row[f"{side}_{c}"].split(";") if ";" in row[f"{side}_{c}"] else [row[f"{side}_{c}"]] * n
            for c in ("device", "cage", "transceiver")]
    assert all(len(c) == n for c in cols), row
    return list(zip(*cols))


def assert_counts_agree(plan, spec: dict) -> None:
    files = outputs(plan, ["cabling", "bom", "summary"])
    summary = json.loads(files["summary.json"])
    rows = list(csv.DictReader(io.StringIO(files["cabling.csv"].decode())))
    bom = list(csv.DictReader(io.StringIO(files["bom.csv"].decode())))
    fabrics = summary.get("fabrics") or {"compute": summary}
    what = f"{plan.name}: {plan.design['topology']} {plan.design['server']} x {plan.design['servers']}"

    # cables: summary per kind == the logical links the cabling.csv rows carry, per kind
    links_of_kind = collections.defaultdict(set)  # (the two fiber rows of an 800G link carry it once)
    for r in rows:
        links_of_kind[r["kind"]].update(r["links"].split(";"))
    by_kind = {k: len(v) for k, v in links_of_kind.items()}
    summary_kinds = {k: n for f in fabrics.values() for k, n in f["cables"].items()}
    assert dict(by_kind) == summary_kinds, f"{what}: cabling.csv {dict(by_kind)} vs summary {summary_kinds}"
    # every logical link is carried by a cable (800G between twin-port modules: two strands)
    carried = collections.Counter(link for r in rows for link in r["links"].split(";"))
    assert len(carried) == sum(summary_kinds.values()), what
    # cables: bom quantity per part == cabling.csv rows of that part (one row per physical
    # cable; a row whose length has no part of its own is ordered as "<part> <length> m")
    medium_of = {}
    for m in plan.media:
        f = plan.facts["media"][m]
        medium_of.update({p: m for p in f["parts"].values()})
        medium_of.setdefault(f["cable_part_number"] or "", m)
    cable_rows = collections.Counter()
    for r in rows:
        part, length = r["part_number"], r["length_m"]
        exact = not length or part in plan.facts["media"][medium_of[part]]["parts"].values()
        cable_rows[(r.get("fabric", "compute"), (part or NOT_IN_CATALOG) if exact else f"{part} {length} m")] += 1
    bom_cables = collections.Counter()
    for line in bom:
        if line["category"] == "cable":
            bom_cables[(line.get("fabric", "compute"), line["part_number"])] += int(line["quantity"])
    assert dict(bom_cables) == dict(cable_rows), f"{what}: bom.csv cables {dict(bom_cables)} vs cabling.csv {dict(cable_rows)}"
    # transceivers: summary == bom == distinct (device, cage) ends with a module in cabling.csv
    ends = collections.defaultdict(set)
    for r in rows:
        for side in "ab":
            for dev, cage, part in _logical_ends(r, side):
                if part:
                    ends[(r.get("fabric", "compute"), part)].add((dev, cage))
    bom_optics = collections.Counter()
    for line in bom:
        if line["category"] == "transceiver":
            bom_optics[(line.get("fabric", "compute"), line["part_number"])] += int(line["quantity"])
    assert dict(bom_optics) == {k: len(v) for k, v in ends.items()}, f"{what}: bom.csv optics vs cabling.csv ends"
    for name, f in fabrics.items():
        assert f["transceivers"] == sum(n for (fab, _), n in bom_optics.items() if fab == name), f"{what}: {name} optics"
    # switches, servers and endpoints: summary == bom
    bom_by = collections.Counter()
    for line in bom:
        bom_by[(line.get("fabric", "compute"), line["category"])] += int(line["quantity"])
    for name, f in fabrics.items():
        assert bom_by[(name, "switch")] == sum(f["switches"].values()), f"{what}: {name} switches"
    assert bom_by[("compute", "server")] == summary["servers"] == plan.design["servers"], what
    assert summary["gpus"] == summary["servers"] * CATALOG.servers[summary["server"]].gpus, what
    assert bom_by[("compute", "endpoint")] == sum(summary["endpoints"].values()), f"{what}: endpoints"
    # every compute NIC port of every server is cabled once (switchless designs: each
    # cable takes two), and the extra endpoints are the spec's
    nics = CATALOG.servers[summary["server"]].nic_groups.get("compute")
    if nics is not None and plan.design["topology"] in ("fat-tree", "rail-optimized", "rail-only", "dragonfly"):
        down = summary["cables"].get("server-leaf", 0) + summary["cables"].get("server-router", 0)
        assert down == summary["servers"] * len(nics.ports), f"{what}: server cables {down}"
    assert summary["endpoints"] == {e["role"]: e["count"] for e in spec.get("extra_endpoints", [])}, what
    # switches and endpoints: summary == the plan's devices
    roles = collections.Counter(d.role for d in plan.devices if d.fabric == "compute")
    assert {r: roles[r] for r in summary["switches"]} == summary["switches"], what
    # a leaf never carries more than the ratio asked for (Clos: "honoured exactly"; less
    # where a leaf's downlinks are not all in use, e.g. a partial SU)
    asked = spec["fabric"].get("oversubscription", "1:1")
    built = summary["oversubscription"].get("leaf")
    if plan.design["topology"] in ("fat-tree", "rail-optimized") and built:
        asked = asked if isinstance(asked, str) else asked["leaf"]
        assert Fraction(*ratio_of(built)) <= Fraction(*ratio_of(asked)), f"{what}: leaf {built}, asked {asked}"


@profile("consistency")
@given(any_specs())
def test_summary_cabling_and_bom_agree(spec):
    plan = compile_spec(spec)
    assume(not isinstance(plan, SpecInvalid))
    assert_counts_agree(plan, spec)


@profile("layout")
@given(layout_specs())
def test_counts_agree_with_a_physical_layout(spec):
    """Cables by exact part and length, twin-port copper (one cable per cage pair)."""
    plan = compile_spec(spec)
    assume(not isinstance(plan, SpecInvalid))
    assert_counts_agree(plan, spec)


# --------------------------------------------------------------------------------------
# 5. plan.json round trip


def assert_round_trip(plan, first: dict[str, bytes] | None = None) -> None:
    """`first`: the plan's outputs when the caller has them (outputs(plan) else)."""
    first = outputs(plan) if first is None else first
    again = plan_from_json(json.loads(first["plan.json"]))
    d = diff_plans(plan, again)
    assert not any(v for k, v in d["counts"].items() if k != "cables_unchanged") and not d["bom"], f"{plan.name}: clusterc diff against its own plan.json: {d['counts']}"
    second = outputs(again)
    assert sorted(second) == sorted(first), f"{plan.name}: files differ: {sorted(set(first) ^ set(second))}"
    differ = [k for k in first if first[k] != second[k]]
    assert not differ, f"{plan.name}: re-rendered from plan.json, these differ: {differ[:10]}"


COMMITTED = sorted(p.name for p in (ROOT / "out").iterdir() if p.is_dir() and not p.name.startswith("."))


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n.endswith("-hall") else n for n in COMMITTED])
def test_committed_examples_round_trip(name):
    """Regression: a plan loaded from plan.json lost its addressing (Ethernet: no configs,
    plan.json without its addressing section), its racks and cable lengths (BOM by the
    medium's generic part, no labels) and its media order (BOM lines reordered)."""
    assert_round_trip(shared_plan(name), tree_bytes(shared_outputs(name)))


@profile("round_trip")
@given(any_specs())
def test_plan_json_round_trip(spec):
    plan = compile_spec(spec)
    assume(not isinstance(plan, SpecInvalid))
    assert_round_trip(plan)


@pytest.mark.slow
@profile("layout")
@given(layout_specs())
def test_plan_json_round_trip_with_a_physical_layout(spec):
    plan = compile_spec(spec)
    assume(not isinstance(plan, SpecInvalid))
    assert_round_trip(plan)


# --------------------------------------------------------------------------------------
# 6. What else a careful user expects


@pytest.mark.slow
@profile("only")
@given(st.one_of(any_specs(), layout_specs()), st.sampled_from(sorted(RENDERERS)))
def test_only_writes_the_same_files(spec, name):
    """`compile --only X` writes X's files as a full compile writes them (each from a
    fresh plan: nothing another renderer computed first may change them)."""
    plan = compile_spec(spec)
    assume(not isinstance(plan, SpecInvalid))
    full = outputs(plan)
    part = outputs(compile_spec(spec), [name])
    part.pop("manifest.json")  # it lists the outputs written, so it differs by design (render/writer.py)
    assert {k: full.get(k) for k in part} == part, f"{spec_yaml(spec)}--only {name} differs"


@profile("rename")
@given(any_specs(), st.sampled_from(["a", "zz-top", "cluster-0042", "x" * 63]))
def test_renaming_changes_only_the_name(spec, name):
    a, b = compile_spec(spec), compile_spec(spec | {"name": name})
    assume(not isinstance(a, SpecInvalid))
    assert not isinstance(b, SpecInvalid), b
    ja = plan_json_text(a)
    assert plan_json_text(b) == ja.replace('\n  "name": "mm",', f'\n  "name": "{name}",', 1)


@profile("permute")
@given(clos_specs().filter(lambda s: len(s.get("extra_endpoints", [])) + len(s.get("fabrics", [])) >= 2),
       st.randoms(use_true_random=False))
def test_list_order_changes_no_count(spec, rng):
    """extra_endpoints and fabrics are lists whose order names nothing: reordered, every
    count in the summary stays (cables may land on other free ports)."""
    other = copy.deepcopy(spec)
    for key in ("extra_endpoints", "fabrics"):
        if key in other:
            rng.shuffle(other[key])
    a, b = compile_spec(spec), compile_spec(other)
    if isinstance(a, SpecInvalid):
        assert isinstance(b, SpecInvalid) and codes(a) == codes(b)
        return
    assert not isinstance(b, SpecInvalid), b
    sa, sb = (json.loads(outputs(p, ["summary"])["summary.json"]) for p in (a, b))
    for s in (sa, sb):
        s["fabrics"] = dict(sorted((s.get("fabrics") or {}).items()))
        s["endpoints"] = dict(sorted(s["endpoints"].items()))
        s["cables"] = dict(sorted(s["cables"].items()))
    assert {k: v for k, v in sa.items() if k != "notes"} == {k: v for k, v in sb.items() if k != "notes"}
    assert sorted(d.name for d in a.devices) == sorted(d.name for d in b.devices)


@profile("invalid")
@given(any_specs().filter(lambda s: isinstance(compile_spec(s), SpecInvalid)))
def test_refused_specs_exit_2_with_a_place_and_no_traceback(spec):
    path = write_spec(work(), spec_yaml(spec))
    placed = set(codes(compile_spec(spec))) - PLACELESS
    for command in ("validate", "compile"):
        args = [command, str(path)] + (["-o", str(work() / "out")] if command == "compile" else [])
        r = cli_in_process(*args)
        assert r.returncode == 2, (command, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr + r.stdout and "error" in r.stderr
        assert f"{path}:" in r.stderr or not placed, r.stderr
    assert not (work() / "out" / spec["name"]).exists(), "a refused spec wrote outputs"


def test_no_free_ports_diagnostic_points_at_the_spec():
    """Regression: DESIGN_NO_FREE_PORTS had no file:line, and its hint offered `servers: 0`."""
    spec = {"name": "mm", "servers": 1, "server": "dgx-b300",
            "fabric": {"topology": "fat-tree", "switch": "arista-7060x6-64pe", "servers_per_leaf": 1},
            "extra_endpoints": [{"role": "ufm", "count": 1, "ports": 1}]}
    result = compile_spec(spec)
    assert codes(result) == ["DESIGN_NO_FREE_PORTS"]
    d = result.diagnostics[0]
    assert d.line >= 1 and d.file.endswith(".yaml") and "servers: 0" not in d.hint, d.format()


def test_every_property_is_deterministic_and_counted():
    """Every generated test runs fixed examples (derandomized, no database: CI sees the
    same specs each run); prints how many one run tries, which the README states."""
    tests = {n: f for n, f in globals().items() if n.startswith("test_") and hasattr(f, "hypothesis")}
    assert len(tests) >= 15
    per_run = {False: 0, True: 0}
    for name, fn in tests.items():
        s = fn._hypothesis_internal_use_settings
        assert s.derandomize and s.database is None and s.deadline is None, name
        slow = any(m.name == "slow" for m in getattr(fn, "pytestmark", []))
        per_run[slow] += s.max_examples
    print(f"metamorphic: {per_run[False]} generated examples without -m slow, {per_run[True]} more in slow tests")
