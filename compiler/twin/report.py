"""The twin's report as text for people (`--format json` prints the same dict)."""

from __future__ import annotations


def text_report(r: dict) -> str:
    lines = [f"twin: {r['switches']} switches, {r['links_wired']} cables wired, peering {r['peering']}"
             + (f", servers {', '.join(r['servers_sampled'])}" if r["servers_sampled"] else "")]
    total = len(r["sessions"])
    lines.append(f"  BGP sessions     {r['sessions_established']}/{total} Established"
                 + (f" (converged in {r['convergence_s']} s)" if r["converged"] else " (NOT converged)"))
    if r["ecmp"]:
        ok = sum(1 for e in r["ecmp"] if e["expected"] == e["installed"])
        widths = sorted({e["installed"] for e in r["ecmp"]})
        lines.append(f"  leaf-pair ECMP   {ok}/{len(r['ecmp'])} as predicted (installed widths {widths})")
    if r.get("server_ping"):
        p = r["server_ping"]
        lines.append(f"  ping             {p['from']} -> {p['to']}: {'ok' if p['ok'] else 'FAILED'}")
    f = r.get("failure")
    if f:
        what = f"cable {f['link']}" if f["link"] else f"switch {f['switch']}"
        widths = sorted({e["installed"] for e in f["ecmp"]})
        lines.append(f"  after failing {what}: {'re-converged' if f['converged'] else 'NOT re-converged'} in "
                     f"{f['reconvergence_s']} s; {f['sessions_established']} sessions up; ECMP widths now {widths}")
        lines += [f"    mismatch: {p}" for p in f["problems"][:20]]
    if r.get("lldp"):
        l = r["lldp"]
        lines.append(f"  LLDP             {l['neighbours']}/{l['expected_neighbours']} neighbour entries on {l['switches']} "
                     f"switches in {l['seconds']} s, written to {l['folder']}/ (clusterc verify --as-built {l['folder']})")
    lines += [f"  mismatch: {p}" for p in r["problems"][:40]]
    if len(r["problems"]) > 40:
        lines.append(f"  ... {len(r['problems']) - 40} more")
    lines.append("OK: converged as planned" if r["ok"] else "FAILED: the fabric does not behave as planned")
    return "\n".join(lines)
