"""A plan diff as text for people and as Markdown for a pull-request comment."""

from __future__ import annotations


def _cable(c: dict) -> str:
    return f"{c['a'][0]} {c['a'][1]} -> {c['b'][0]} {c['b'][1]} ({c['kind']}, {c['media']}, {c['speed_gbps']}G)"


def diff_text(d: dict, limit: int = 20) -> str:
    n = d["counts"]
    lines = [f"{d['old']} -> {d['new']}: devices +{n['devices_added']} -{n['devices_removed']}, "
             f"cables +{n['cables_added']} -{n['cables_removed']} ~{n['cables_changed']}"]
    for key, value in d.get("summary", {}).items():
        lines.append(f"  {key}: {value['old']} -> {value['new']}")
    for title, items in (("devices added", d["devices"]["added"]), ("devices removed", d["devices"]["removed"])):
        if items:
            shown = ", ".join(items[:limit]) + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")
            lines.append(f"  {title}: {shown}")
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
    for b in d["bom"]:
        lines.append(f"  BOM {b['category']} {b['part_number']}: {b['old']} -> {b['new']} ({b['delta']:+d})")
    return "\n".join(lines) + "\n"


def diff_markdown(d: dict, limit: int = 50) -> str:
    n = d["counts"]
    moved = n["cables_removed"] + n["cables_changed"]
    verdict = ("**No pulled cable moves.**" if moved == 0 else
               f"**{moved} existing cable(s) must be removed or re-plugged.**")
    out = [f"### clusterc: `{d['old']}` → `{d['new']}`", "", verdict, "",
           "| | added | removed | changed |", "|---|---:|---:|---:|",
           f"| devices | {n['devices_added']} | {n['devices_removed']} | {len(d['devices']['changed'])} |",
           f"| cables | {n['cables_added']} | {n['cables_removed']} | {n['cables_changed']} |", ""]
    if d.get("summary"):
        out += ["| figure | before | after |", "|---|---|---|"]
        out += [f"| {k} | {v['old']} | {v['new']} |" for k, v in d["summary"].items()]
        out.append("")
    if d["bom"]:
        out += ["| BOM | part | before | after | delta |", "|---|---|---:|---:|---:|"]
        out += [f"| {b['category']} | `{b['part_number']}` | {b['old']} | {b['new']} | {b['delta']:+d} |" for b in d["bom"]]
        out.append("")
    for title, key in (("Removed cables", "removed"), ("Changed cables", "changed")):
        items = d["cables"][key]
        if items:
            out += [f"<details><summary>{title} ({len(items)})</summary>", "", "```"]
            for c in items[:limit]:
                out.append(_cable(c) if key == "removed" else f"{_cable(c['old'])} => {_cable(c['new'])}")
            if len(items) > limit:
                out.append(f"... {len(items) - limit} more")
            out += ["```", "</details>", ""]
    return "\n".join(out)
