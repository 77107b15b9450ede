"""The verify result as data (the JSON contract, verify.schema.json) and as text or
Markdown for people: port by port, in the terms the floor uses (cable id, device, port
as the cabling sheet names it, the NOS's, with the panel's cage number beside a name that
is not the panel's, rack and U where the plan has a layout) and what to do."""

from __future__ import annotations

import numpy as np

from ..plan.model import Plan
from .discovery import Discovery
from .ibnetdiscover import SPEED_NAME
from .match import KINDS, Outcome
from .names import cable_id_list, floor_name, ib_port_numbers
from .resolve import Resolved, split_label
from .scope import Scope
from .unverified import input_findings

ORDER = {k: i for i, k in enumerate(KINDS)}


class _Places:
    """Device and port text for a finding: plan names, rack/U, the IB port number."""

    def __init__(self, plan: Plan, disc: Discovery, res: Resolved):
        self.plan, self.disc, self.res = plan, disc, res
        self.offsets = plan.port_offsets()
        self.port_dev = np.repeat(np.arange(len(plan.devices)), [len(plan.layouts[d.layout]) for d in plan.devices])
        phys = plan.physical
        self.racks = [r.name for r in phys.racks] if phys is not None else None
        self.ib = {lid: {i: n for n, i in table.items()} for lid, table in ib_port_numbers(plan).items()}
        self.ids = cable_id_list(plan)
        links = plan.links
        self.a_g = self.offsets[links.a_dev] + links.a_port
        self.b_g = self.offsets[links.b_dev] + links.b_port

    def other_end(self, c: int, g: int) -> int:
        return int(self.b_g[c]) if int(self.a_g[c]) == g else int(self.a_g[c])

    def end(self, g: int) -> dict:
        dev = int(self.port_dev[g])
        port = g - int(self.offsets[dev])
        d = self.plan.devices[dev]
        name, cage = floor_name(self.plan, dev, port)
        out: dict[str, str | int] = {"device": d.name, "port": name}
        if cage is not None:
            out["cage"] = cage
        ib = self.ib.get(d.layout, {}).get(port)
        if ib is not None:
            out["ib_port"] = ib
        phys = self.plan.physical
        if self.racks is not None and phys is not None:  # racks are named only with a physical layout
            out["rack"] = self.racks[int(phys.dev_rack[dev])]
            out["u"] = int(phys.dev_u[dev])
        return out

    def found_end(self, g: int, node: int, row: int, side: int) -> dict:
        if g >= 0:
            return self.end(g)
        dev = int(self.res.node_dev[node])
        name = self.plan.devices[dev].name if dev >= 0 else self.res.labels[node]
        raw = self.disc.links[row][1 if side == 0 else 3]
        port = f"IB port {raw}" if isinstance(raw, int) else (raw[0] if raw else None)
        out = {"device": name, "port": port}
        if dev < 0:
            out["unknown_device"] = True
        return out

    @staticmethod
    def text(end: dict | None) -> str:
        if not end:
            return "-"
        s = end["device"] if "port" not in end else f"{end['device']} {end['port'] or '?'}"
        if "cage" in end:
            s += f" (cage {end['cage']})"
        if "ib_port" in end:
            s += f" (IB port {end['ib_port']})"
        if end.get("rack"):
            s += f" [rack {end['rack']} U{end['u']}]"
        if end.get("rate"):
            s += f" at {end['rate']}"
        return s


def _joins(places: _Places, u, g1: int, g2: int) -> bool:
    """Found link u joins ports g1 and g2 (an end found only as a device: that device)."""
    def at(side: int, g: int) -> bool:
        return u.g[side] == g if u.g[side] >= 0 else u.dev[side] == int(places.port_dev[g])
    return (at(0, g1) and at(1, g2)) or (at(0, g2) and at(1, g1))


def _rate(lanes: int | None, lane_gbps: float) -> str:
    if lanes is None:
        return f"{lane_gbps:g}G"
    name = SPEED_NAME.get(lane_gbps)
    return f"{lanes}x{name}" if name else f"{lanes}x{lane_gbps:g}G"


def build(plan: Plan, disc: Discovery, res: Resolved, outcome: Outcome, scope: Scope, plan_source: str) -> dict:
    ids = cable_id_list(plan)
    places = _Places(plan, disc, res)
    links = plan.links
    offsets = places.offsets
    a_g = offsets[links.a_dev] + links.a_port
    b_g = offsets[links.b_dev] + links.b_port
    in_scope = scope.in_scope
    mismatches: list[dict] = []
    explained = np.zeros(len(links), dtype=bool)

    def other(c: int, g: int) -> int:
        return int(b_g[c]) if int(a_g[c]) == g else int(a_g[c])

    for f in outcome.findings:
        kind = f["kind"]
        cables = f["cables"]
        if cables and not in_scope[cables].any():
            continue
        explained[cables] = True
        source = disc.links[f["rows"][0]][6]
        if kind == "swapped":
            u, side = f["found"], f["anchor_side"]
            c1, c2 = sorted(cables, key=lambda c: ids[c])
            if _joins(places, u, int(a_g[c1]), int(b_g[c2])) or _joins(places, u, int(a_g[c2]), int(b_g[c1])):
                # the usual case, and how it is told: the lower (A) ends are right, the upper ends exchanged
                y1, y2 = int(b_g[c1]), int(b_g[c2])
            else:  # the two cables' ends were crossed another way: tell it as found
                c1, c2 = cables
                y1 = f["expected"]
                y2 = u.g[1 - side] if u.g[1 - side] >= 0 else (
                    int(a_g[c2]) if places.port_dev[a_g[c2]] == u.dev[1 - side] else int(b_g[c2]))
            e1, e2 = places.end(y1), places.end(y2)
            anchor1, anchor2 = places.end(other(c1, y1)), places.end(other(c2, y2))
            mismatches.append({
                "kind": kind, "cable_id": ids[c1], "cables": [ids[c1], ids[c2]],
                "anchor": anchor1, "expected": e1, "found": e2,
                "fix": f"swap the plugs in {places.text(e1)} and {places.text(e2)}: cable {ids[c1]} (from "
                       f"{places.text(anchor1)}) belongs in {places.text(e1)}, cable {ids[c2]} (from {places.text(anchor2)}) "
                       f"in {places.text(e2)}",
                "source": source})
        elif kind in ("wrong-port", "wrong-device"):
            u, side = f["found"], f["anchor_side"]
            (c,) = cables
            anchor = places.end(u.g[side])
            exp = places.end(f["expected"])
            found = places.found_end(u.g[1 - side], u.node[1 - side], u.row, 1 - side)
            where = "port" if kind == "wrong-port" else "device"
            mismatches.append({
                "kind": kind, "cable_id": ids[c], "cables": [ids[c]], "anchor": anchor, "expected": exp, "found": found,
                "fix": f"move the far end of cable {ids[c]} (from {places.text(anchor)}) out of {places.text(found)} "
                       f"into {places.text(exp)} (wrong {where})",
                "source": source})
        elif kind == "unverified":  # a switch's far end whose port was not said (match.py)
            u, side = f["found"], f["anchor_side"]
            (c,) = cables
            anchor = places.end(u.g[side])
            exp = places.end(f["expected"])
            found = places.found_end(u.g[1 - side], u.node[1 - side], u.row, 1 - side)
            said = f"port {found['port']!r}" if found.get("port") else "no port"
            mismatches.append({
                "kind": kind, "cable_id": ids[c], "cables": [ids[c]], "anchor": anchor, "expected": exp, "found": found,
                "fix": f"cable {ids[c]} (from {places.text(anchor)}) reaches {found['device']}, which gave {said}, none of "
                       f"its ports in the plan: which port it is in was not checked; check by hand that it is in "
                       f"{places.text(exp)}",
                "source": source})
        elif kind == "unplanned":
            u = f["found"]
            e0 = places.found_end(u.g[0], u.node[0], u.row, 0)
            e1 = places.found_end(u.g[1], u.node[1], u.row, 1)
            mismatches.append({
                "kind": kind, "cable_id": None, "cables": [], "anchor": e0, "expected": None, "found": e1,
                "fix": f"remove the cable between {places.text(e0)} and {places.text(e1)}: it is not in the plan",
                "source": source})
        else:  # speed, width
            (c,) = cables
            planned = f["planned_gbps"]
            planned_rate = (_rate(4, f["planned_lane_gbps"]) if f["planned_lane_gbps"] and f["lanes"] is not None
                            else f"{planned}G")  # an Ethernet port reports its speed, not lanes
            found_rate = _rate(f["lanes"], f["lane_gbps"])
            a, b = places.end(int(a_g[c])), places.end(int(b_g[c]))
            total = f["lane_gbps"] * (f["lanes"] or 1)
            what = ("fewer lanes than planned: reseat or replace the cable and its transceivers" if kind == "width"
                    else "check that both transceivers and the cable are the planned parts and the port speed settings")
            mismatches.append({
                "kind": kind, "cable_id": ids[c], "cables": [ids[c]], "anchor": a,
                "expected": {**b, "rate": planned_rate, "speed_gbps": planned},
                "found": {**b, "rate": found_rate, "speed_gbps": total},
                "fix": f"cable {ids[c]} ({places.text(a)} - {places.text(b)}) is up at {found_rate}, the plan says "
                       f"{planned_rate}: {what}",
                "source": source})

    unread, covered, management = input_findings(plan, disc, res, outcome.seen_ports, in_scope, places)
    mismatches += unread
    explained[covered] = True
    missing = scope.expected & ~outcome.matched & ~explained & in_scope
    for c in np.flatnonzero(missing).tolist():
        a, b = places.end(int(a_g[c])), places.end(int(b_g[c]))
        mismatches.append({
            "kind": "missing", "cable_id": ids[c], "cables": [ids[c]], "anchor": a, "expected": b, "found": None,
            "fix": f"cable {ids[c]} is not seen: connect {places.text(a)} to {places.text(b)}, or if it is in place, "
                   f"reseat it and check both transceivers (the link is down)",
            "source": None})

    seen_names: set[tuple[str, str]] = set()
    for node, dev in res.renamed:
        key = (split_label(res.labels[node], disc.nodes[res.keys[node]].kind)[0], plan.devices[dev].name)
        if key in seen_names:
            continue
        seen_names.add(key)
        exp = {"device": plan.devices[dev].name}
        if places.racks is not None and plan.physical is not None:  # racks are named only with a physical layout
            exp.update(rack=places.racks[int(plan.physical.dev_rack[dev])], u=int(plan.physical.dev_u[dev]))
        mismatches.append({
            "kind": "name", "cable_id": None, "cables": [], "anchor": None, "expected": exp, "found": {"device": key[0]},
            "fix": f"the device cabled as {exp['device']}" + (f" [rack {exp['rack']} U{exp['u']}]" if "rack" in exp else "")
                   + f" calls itself {key[0]!r}: "
                   f"set its hostname (InfiniBand: node description) to {plan.devices[dev].name}",
            "source": disc.nodes[res.keys[node]].source})

    mismatches.sort(key=lambda m: (ORDER[m["kind"]], m["cable_id"] or "", _found_key(m)))
    checked = int((scope.expected & in_scope).sum() + (explained & ~(scope.expected & in_scope)).sum())
    notes = []
    if res.inferred_ports:
        hosts = sorted({res.labels[n].split()[0] for n in res.inferred_ports})
        notes.append(f"{len(res.inferred_ports)} host port(s) on {len(hosts)} host(s) are named by RDMA devices the catalog "
                     f"does not map to panel ports; their host ends were taken as planned (not checked)")
    unchecked = int((outcome.port_unchecked & in_scope).sum())
    if unchecked:
        notes.append(f"{unchecked} cable(s) were seen from one end only and the far end's port was not reported "
                     f"(e.g. hosts that send their MAC as the LLDP port id): only the far device was checked")
    if management:
        notes.append(f"{management} neighbour row(s) on ports that are no fabric port of the plan (management ports "
                     f"such as eth0 or Management1, hosts' other NICs) are not fabric cables "
                     f"of the plan and were not checked")
    out = {
        "ok": not mismatches,
        "plan": plan.name,
        "plan_source": plan_source,
        "inputs": [{"file": f, "format": fmt} for f, fmt in zip(disc.files, disc.formats, strict=True)],
        "checked_cables": checked,
        "matched_cables": int((outcome.matched & in_scope & scope.expected).sum()),
        "mismatches": mismatches,
        "not_seen": scope.not_seen,
        "notes": notes,
    }
    if unchecked or res.inferred_ports:  # what OK does not cover, said beside it
        out["host_ends_by_device"] = unchecked + len(res.inferred_ports)
    return out


def _found_key(m: dict) -> str:
    f = m.get("found") or {}
    return f"{f.get('device', '')} {f.get('port', '')}"


def _what(m: dict) -> str:
    """One line per finding: what is where, in the floor's terms (the fix follows it)."""
    t = _Places.text
    kind = m["kind"]
    if kind == "swapped":
        return f"{m['cables'][0]} is in {t(m['found'])}, {m['cables'][1]} in {t(m['expected'])}"
    if kind in ("wrong-port", "wrong-device"):
        return f"in {t(m['found'])}, planned {t(m['expected'])}"
    if kind == "missing":
        return f"{t(m['anchor'])} - {t(m['expected'])} not seen"
    if kind == "unplanned":
        return f"{t(m['anchor'])} - {t(m['found'])}, not in the plan"
    if kind in ("speed", "width"):
        far = {k: v for k, v in m["expected"].items() if k not in ("rate", "speed_gbps")}
        return f"{t(m['anchor'])} - {t(far)} up at {m['found']['rate']}, planned {m['expected']['rate']}"
    if kind == "unverified":
        if m["anchor"] is None:
            return f"table of {m['found']['device']!r}, no device of the plan"
        return f"{t(m['anchor'])} - {t(m['found'])}, not checked"
    return f"{t(m['expected'])} calls itself {m['found']['device']!r}"


def text_report(r: dict) -> str:
    inputs = ", ".join(sorted({i["format"] for i in r["inputs"]}))
    lines = [f"verify {r['plan']}: {len(r['inputs'])} input file(s) ({inputs}); {r['checked_cables']:,} cable(s) checked, "
             f"{r['matched_cables']:,} as planned, {len(r['mismatches'])} mismatch(es)"]
    for m in r["mismatches"]:
        cable = " & ".join(m["cables"]) if m["cables"] else "-"
        lines.append(f"  {m['kind']:<12} {cable}: {_what(m)}" + (f"  ({m['source']})" if m.get("source") else ""))
        lines.append(f"      fix: {m['fix']}")
    devices = [n for n in r["not_seen"] if n["what"] == "device"]
    for n in r["not_seen"]:
        if n["what"] != "device" or len(devices) <= 3:
            lines.append(f"  not seen: {n['what']} {n['name']}: {n['cables']:,} cable(s) not checked ({n['reason']})")
    if len(devices) > 3:
        names = ", ".join(n["name"] for n in devices[:3])
        lines.append(f"  not seen: {len(devices)} devices ({names}, ...): {sum(n['cables'] for n in devices):,} cable(s) "
                     f"not checked (not in the input: powered off, not cabled, or their discovery output not collected; "
                     f"--format json lists them)")
    for note in r["notes"]:
        lines.append(f"  note: {note}")
    if r.get("guid_files"):
        g = r["guid_files"]
        lines.append(f"  wrote the discovered GUIDs of {g['nodes']:,} node(s) to {g['folder']}/: {', '.join(g['files'])}")
    partial = r.get("host_ends_by_device")
    lines.append(("OK: the fabric matches the plan" + (f" ({partial:,} host end(s) checked by device only, not by port: see "
                                                        f"the notes)" if partial else ""))
                 if r["ok"] else f"FAILED: {len(r['mismatches'])} mismatch(es)")
    return "\n".join(lines) + "\n"


def markdown_report(r: dict) -> str:
    status = "matches the plan" if r["ok"] else f"**{len(r['mismatches'])} mismatch(es)**"
    if r["ok"] and r.get("host_ends_by_device"):
        status += f" ({r['host_ends_by_device']:,} host ends by device only)"
    out = [f"### verify `{r['plan']}`: {status}", "",
           f"{r['checked_cables']:,} cables checked, {r['matched_cables']:,} as planned, from "
           f"{len(r['inputs'])} input file(s).", ""]
    if r["mismatches"]:
        out += ["| kind | cable | what | fix |", "|---|---|---|---|"]
        for m in r["mismatches"]:
            cells = [m["kind"], " & ".join(m["cables"]) or "-", _what(m), m["fix"]]
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        out.append("")
    if r["not_seen"]:
        out += ["Not seen (not checked):", ""] + [f"- {n['what']} `{n['name']}`: {n['cables']:,} cables ({n['reason']})"
                                                   for n in r["not_seen"]] + [""]
    out += [f"- note: {n}" for n in r["notes"]]
    return "\n".join(out).rstrip() + "\n"
