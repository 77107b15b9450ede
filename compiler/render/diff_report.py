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
    return (f"{d['old']} -> {d['new']}: devices +{n['devices_added']} -{n['devices_removed']} ({n['devices_moved']} moved), "
            f"cables +{n['cables_added']} -{n['cables_removed']} ~{n['cables_changed']} "
            f"({n['cables_physical']} changed physically)")


def diff_text(d: dict, limit: int = 20) -> str:
    lines = [_headline(d)]
    for key, value in d.get("summary", {}).items():
        lines.append(f"  {key}: {value['old']} -> {value['new']}")
    for title, items in (("devices added", d["devices"]["added"]), ("devices removed", d["devices"]["removed"])):
        if items:
            shown = ", ".join(items[:limit]) + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")
            lines.append(f"  {title}: {shown}")
    for m in d["devices"]["moved"][:limit]:
        lines.append(f"  > {m['name']} moved: {changes_text(m['changes'])}")
    if len(d["devices"]["moved"]) > limit:
        lines.append(f"  ... {len(d['devices']['moved']) - limit} more devices moved")
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
    counts = [("devices", n["devices_added"], n["devices_removed"], len(d["devices"]["changed"]), n["devices_moved"]),
              ("cables", n["cables_added"], n["cables_removed"], n["cables_changed"], n["cables_physical"])]
    sections = []
    for title, items, line in (
            ("Moved devices", d["devices"]["moved"], lambda m: f"{m['name']}: {changes_text(m['changes'])}"),
            ("Removed cables", d["cables"]["removed"], _cable),
            ("Changed cables", d["cables"]["changed"], lambda c: f"{_cable(c['old'])} => {_cable(c['new'])}"),
            ("Physically changed cables", d["cables"]["physical"],
             lambda c: f"{c['cable_id']}: {_cable(c)}: {changes_text(c['changes'])}")):
        if items:
            sections.append({"title": title, "count": len(items), "lines": [line(c) for c in items[:limit]],
                             "more": max(0, len(items) - limit)})
    text = render_template(
        "diff/diff.md.j2", old=d["old"], new=d["new"], verdict=verdict, counts=counts,
        summary=[(k, v["old"], v["new"]) for k, v in d.get("summary", {}).items()],
        bom=[(b["category"], bom_part(b), b["old"], b["new"], f"{b['delta']:+d}") for b in d["bom"]],
        sections=sections)
    return text.rstrip("\n") + "\n"  # each block ends in a blank line to part it from the next; the last needs none
