"""A plan diff as text for people and as Markdown for a pull-request comment."""

from __future__ import annotations

from .templates import render_template


def _cable(c: dict) -> str:
    return f"{c['a'][0]} {c['a'][1]} -> {c['b'][0]} {c['b'][1]} ({c['kind']}, {c['media']}, {c['speed_gbps']}G)"


def _value(key: str, v) -> str:
    if v is None:
        return "none"
    if key == "length_m":
        return f"{v:g} m"
    if key in ("u", "a_u", "b_u"):
        return f"U{v}"
    return str(v)


def changes_text(changes: dict) -> str:
    """`b_rack DH1.A18 -> DH1.B18; length_m 3 m -> 5 m; ...` for every changed attribute."""
    return "; ".join(f"{k} {_value(k, c['old'])} -> {_value(k, c['new'])}" for k, c in changes.items())


def bom_part(b: dict) -> str:
    """A BOM entry's part as ordered: `MFP7E10-N003 3 m` for a cable of a given length."""
    part, length = b["part_number"], b.get("length_m")
    if length is None or part.endswith(f" {length:g} m"):  # a part without a catalog number already says its length
        return part
    return f"{part} {length:g} m"


def _headline(d: dict) -> str:
    n = d["counts"]
    return (f"{d['old']} -> {d['new']}: devices +{n['devices_added']} -{n['devices_removed']} ~{n['devices_changed']} "
            f"({n['devices_moved']} moved, {n['devices_relabeled']} relabeled), "
            f"cables +{n['cables_added']} -{n['cables_removed']} ~{n['cables_changed']} "
            f"({n['cables_physical']} changed physically, {n['cables_relabeled']} relabeled)")


def cost_text(cost: dict) -> str:
    """`cost USD 1440000.00 -> 1080000.00 (-360000.00)`, saying which side has no price
    file and which parts no price, so a partial figure never reads as a total."""
    def side(currency, amount):
        if currency is None:
            return "no price file"
        return f"{currency} {amount}" if amount is not None else f"{currency} unknown"

    old, new = side(cost["old_currency"], cost["old"]), side(cost["new_currency"], cost["new"])
    text = f"cost {old} -> {new}"
    if cost["delta"] is not None:
        text += f" ({'+' if not cost['delta'].startswith('-') else ''}{cost['delta']})"
    if cost["unpriced_old"] and cost["unpriced_old"] == cost["unpriced_new"]:
        text += f"; without a price (before and after): {', '.join(cost['unpriced_new'])}"
    else:
        for which in ("old", "new"):
            if cost[f"unpriced_{which}"]:
                text += f"; {which} without a price: {', '.join(cost[f'unpriced_{which}'])}"
    return text


def diff_text(d: dict, limit: int = 20) -> str:
    lines = [_headline(d)]
    for key, value in d.get("summary", {}).items():
        lines.append(f"  {key}: {value['old']} -> {value['new']}")
    if "cost" in d:
        lines.append(f"  {cost_text(d['cost'])}")
    for title, items in (("devices added", d["devices"]["added"]), ("devices removed", d["devices"]["removed"])):
        if items:
            shown = ", ".join(items[:limit]) + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")
            lines.append(f"  {title}: {shown}")
    for m in d["devices"]["changed"][:limit]:
        lines.append(f"  ~ {m['name']} changed: {changes_text(m['changes'])}")
    if len(d["devices"]["changed"]) > limit:
        lines.append(f"  ... {len(d['devices']['changed']) - limit} more devices changed")
    for m in d["devices"]["moved"][:limit]:
        lines.append(f"  > {m['name']} moved: {changes_text(m['changes'])}")
    if len(d["devices"]["moved"]) > limit:
        lines.append(f"  ... {len(d['devices']['moved']) - limit} more devices moved")
    for m in d["devices"]["relabeled"][:limit]:
        lines.append(f"  = {m['old']} relabeled {m['new']}")
    if len(d["devices"]["relabeled"]) > limit:
        lines.append(f"  ... {len(d['devices']['relabeled']) - limit} more devices relabeled")
    for title, key in (("cables removed", "removed"), ("cables added", "added")):
        items = d["cables"][key]
        for c in items[:limit]:
            lines.append(f"  {'-' if key == 'removed' else '+'} {c['cable_id']}: {_cable(c)}")
        if len(items) > limit:
            lines.append(f"  ... {len(items) - limit} more {title}")
    for c in d["cables"]["changed"][:limit]:
        lines.append(f"  ~ {c['old']['cable_id']}: {_cable(c['old'])}  =>  {_cable(c['new'])} [{c['what']}]")
    if len(d["cables"]["changed"]) > limit:
        lines.append(f"  ... {len(d['cables']['changed']) - limit} more cables changed")
    for c in d["cables"]["physical"][:limit]:
        lines.append(f"  ! {c['cable_id']}: {_cable(c)}: {changes_text(c['changes'])}")
    if len(d["cables"]["physical"]) > limit:
        lines.append(f"  ... {len(d['cables']['physical']) - limit} more cables changed physically")
    for c in d["cables"]["relabeled"][:limit]:
        lines.append(f"  = {c['old_cable_id']} relabeled {c['cable_id']}: {_cable(c)}")
    if len(d["cables"]["relabeled"]) > limit:
        lines.append(f"  ... {len(d['cables']['relabeled']) - limit} more cables relabeled")
    for b in d["bom"]:
        lines.append(f"  BOM {b['category']} {bom_part(b)}: {b['old']} -> {b['new']} ({b['delta']:+d})")
    return "\n".join(lines) + "\n"


def diff_markdown(d: dict, limit: int = 50) -> str:
    """The diff for a pull-request comment: a verdict on pulled cables, the counts, changed
    figures and BOM lines as tables, the details folded (templates/diff/diff.md.j2)."""
    n = d["counts"]
    moved = n["cables_removed"] + n["cables_changed"]
    verdict = [("**No pulled cable moves.**" if moved == 0 else
                f"**{moved} existing cable(s) must be removed or re-plugged.**")]
    if n["cables_physical"] or n["devices_moved"]:
        verdict.append(f"**{n['cables_physical']} existing cable(s) change physically (rack, length, part or label) "
                       f"and {n['devices_moved']} device(s) move to another rack or U.**")
    if n["devices_changed"]:
        verdict.append(f"**{n['devices_changed']} device(s) change model or role.**")
    if n["devices_relabeled"] or n["cables_relabeled"]:
        verdict.append(f"**{n['devices_relabeled']} server(s) renamed: {n['cables_relabeled']} cable(s) get new labels, "
                       f"every port stays.**")
    counts = [("devices", n["devices_added"], n["devices_removed"], n["devices_changed"], n["devices_moved"],
               n["devices_relabeled"]),
              ("cables", n["cables_added"], n["cables_removed"], n["cables_changed"], n["cables_physical"],
               n["cables_relabeled"])]
    sections = []
    for title, items, line in (
            ("Changed devices", d["devices"]["changed"], lambda m: f"{m['name']}: {changes_text(m['changes'])}"),
            ("Moved devices", d["devices"]["moved"], lambda m: f"{m['name']}: {changes_text(m['changes'])}"),
            ("Relabeled devices", d["devices"]["relabeled"], lambda m: f"{m['old']} -> {m['new']}"),
            ("Removed cables", d["cables"]["removed"], lambda c: f"{c['cable_id']}: {_cable(c)}"),
            ("Changed cables", d["cables"]["changed"],
             lambda c: f"{c['old']['cable_id']}: {_cable(c['old'])} => {c['new']['cable_id']}: {_cable(c['new'])}"),
            ("Physically changed cables", d["cables"]["physical"],
             lambda c: f"{c['cable_id']}: {_cable(c)}: {changes_text(c['changes'])}"),
            ("Relabeled cables", d["cables"]["relabeled"],
             lambda c: f"{c['old_cable_id']} -> {c['cable_id']}: {_cable(c)}")):
        if items:
            sections.append({"title": title, "count": len(items), "lines": [line(c) for c in items[:limit]],
                             "more": max(0, len(items) - limit)})
    text = render_template(
        "diff/diff.md.j2", old=d["old"], new=d["new"], verdict=verdict, counts=counts,
        summary=[(k, v["old"], v["new"]) for k, v in d.get("summary", {}).items()],
        cost=cost_text(d["cost"]) if "cost" in d else None,
        bom=[(b["category"], bom_part(b), b["old"], b["new"], f"{b['delta']:+d}") for b in d["bom"]],
        sections=sections)
    return text.rstrip("\n") + "\n"  # each block ends in a blank line to part it from the next; the last needs none
