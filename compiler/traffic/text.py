"""`clusterc traffic` as text: one row per pattern, routing and failure, then the hottest links."""

from __future__ import annotations


def seconds_text(t: float | None) -> str:
    """Three significant digits and a unit: 131 µs, 53.1 ms, 5.60 s."""
    if t is None:
        return "-"
    for scale, unit in ((1e-6, "µs"), (1e-3, "ms"), (1.0, "s")):
        v = t / scale
        if v < 999.5 or unit == "s":
            return f"{_three_digits(v)} {unit}"
    raise AssertionError("unreachable")


def _three_digits(v: float) -> str:
    if v >= 99.95:
        return f"{v:.0f}"
    if v >= 9.995:
        return f"{v:.1f}"
    return f"{v:.2f}"


def size_text(n: int) -> str:
    """Bytes as the spec would write them: the unit giving the smallest whole number (140GB, 1GiB)."""
    units = (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10),
             ("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("KB", 10**3))
    whole = [(n // v, unit) for unit, v in units if n >= v and n % v == 0]
    return "{}{}".format(*min(whole)) if whole else f"{n}B"


def traffic_text(report: dict) -> str:
    p = report["placement"]
    qps = report["qps_per_connection"]
    lines = [f"{report['name']}: {report['gpus']:,} GPUs, {report['topology']}; {p['servers']:,} servers "
             f"({p['selection']}, {p['order']} order), {qps} QP{'s' if qps > 1 else ''} per connection"]
    results = report["results"]
    sizes = list(results[0]["collective_seconds"]) if results else []
    head = ["pattern", "routing", "failure", "Gb/s/GPU", "mean", "slowest", "max load"] + [size_text(int(s)) for s in sizes]
    rows = [head]
    for r in results:
        rows.append([r["pattern"], r["routing"], r["failure"] or "-", f"{r['gbps_per_gpu']:,.1f}", f"{r['fraction']:.1%}",
                     f"{r['min_fraction']:.1%}", f"{r['max_link_load']:.2f}"]
                    + [seconds_text(r["collective_seconds"][s]) for s in sizes])
    if not any(r["failure"] for r in results):
        rows = [row[:2] + row[3:] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    left = 2 if rows[0][2] != "failure" else 3
    for row in rows:
        lines.append("  " + "  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))))
    lines.append("  (mean: throughput over NIC line rate; slowest: the connection that paces the collective; "
                 "max load: offered load on the busiest link at line rate; times: alpha-beta at the slowest connection)")
    if report.get("reference_routing"):
        lines.append(f"  (clusterc check's all-reduce estimates are the ring-allreduce and hierarchical times under "
                     f"{report['reference_routing']}, every server in plan order)")
    for r in results:
        b = r.get("balls_into_bins")
        if b:
            lines.append(f"  {r['pattern']} {r['routing']}: balls into bins expects {b['equal_share']:.1%} (equal share on "
                         f"both hops) to {b['single_hop_bound']:.1%} (uplink collisions alone) for {b['flows_per_leaf']} flows "
                         f"on {b['uplinks']} uplinks" + (f" of {b['uplink_line_rates']}x line rate" if b.get("uplink_line_rates") else "")
                         + f"; measured {r['fraction']:.1%}")
    for r in results:
        hot = r["hot_links"][:3]
        if hot and r["max_link_load"] > 1:
            where = f"{r['pattern']}, {r['routing']}" + (f", after {r['failure']}" if r["failure"] else "")
            lines.append(f"  hottest ({where}): " + "; ".join(
                f"{h['from']} -> {h['to']} ({h['cable']}) {h['offered_load']:.2f}x, {h['flows']:g} flows" for h in hot))
    notes = []
    for r in results:
        for n in r["notes"]:
            if n not in notes:
                notes.append(n)
        if r["unroutable_flows"]:
            n = (f"{r['pattern']} {r['routing']}" + (f" after {r['failure']}" if r["failure"] else "")
                 + f": {r['unroutable_flows']:,} flows have no path")
            notes.append(n)
    for u in report.get("unavailable", []):
        notes.append(f"{u['pattern']} {u['routing']} after {u['failure']}: {u['reason']}")
    lines += [f"  note: {n}" for n in notes]
    return "\n".join(lines) + "\n"
