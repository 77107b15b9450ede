"""The report as text or Markdown (JSON is the report itself)."""

from __future__ import annotations


def _pct(x: float) -> str:
    return f"{100 * x:.3f}%"


def _rows(r: dict) -> list[tuple[str, ...]]:
    m = r["metrics"]
    rows = []
    for name, key, fmt in (("GPUs cut off", "gpus_cut_off", lambda v: f"{v:.3f}"),
                           ("bisection fraction", "bisection_fraction", lambda v: f"{v:.4f}"),
                           ("delivery", "delivery", lambda v: f"{v:.4f}"),
                           ("collective fraction", "collective_fraction", lambda v: f"{v:.4f}")):
        if key not in m:
            continue
        s = m[key]
        rows.append((name, f"{fmt(s['mean'])} ± {fmt(s['stderr'] or 0)}",
                     *(f"{fmt(s[p])} ± {fmt(s[p + '_stderr'])}" for p in ("p50", "p90", "p99", "p999"))))
    return rows


def _lines(r: dict, md: bool) -> list[str]:
    out = []
    h = (lambda t: f"## {t}") if md else (lambda t: f"{t}:")
    sw = ", ".join(f"{n} {role}" for role, n in r["switches"].items())
    out.append(f"{'# ' if md else ''}resilience of {r['name']}: {r['gpus']:,} GPUs, {sw}; "
               f"{r['samples']:,} sampled states, seed {r['seed']} ({r['executor']['name']}, {r['executor']['workers']} "
               f"worker{'s' if r['executor']['workers'] > 1 else ''})")
    out.append("")
    out.append(h("rates (unavailability = afr x mttr / 8760 h)"))
    for cls, x in r["rates"].items():
        out.append(f"{'- ' if md else '  '}{cls}: {r['components'][cls]:,} units, afr {x['afr']:g}/year, mttr {x['mttr_hours']:g} h, "
                   f"unavailability {x['unavailability']:.3g} ({x['source']})")
    out.append("")
    out.append(h("per state (pNN: NN % of states are no worse)"))
    if "collective" in r:
        c = r["collective"]
        out.append(f"  collective: {c['pattern']}, {c['routing']} routing; intact {c['intact_fraction']:.4f} of {c['of']}")
    head = ("metric", "mean", "p50", "p90", "p99", "p99.9")
    rows = _rows(r)
    if md:
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(x) + " |" for x in rows]
    else:
        w = [max(len(x[i]) for x in [head] + rows) for i in range(len(head))]
        out += ["  " + "  ".join(c.ljust(w[i]) for i, c in enumerate(x)) for x in [head] + rows]
    if r["samples"] < 10_000:  # p99.9 is the 1-in-1000 state: fewer than 10 of them is noise
        out.append(f"  note: p99.9 rests on {r['samples'] / 1000:g} sampled states; give --samples 10000 or more to read it")
    for name, f in r.get("fabrics", {}).items():
        g, b = f["metrics"]["gpus_cut_off"], f["metrics"]["bisection_fraction"]
        sw = ", ".join(f"{n} {role}" for role, n in f["switches"].items())
        out.append(f"{'- ' if md else '  '}fabric {name} ({sw}): GPUs whose server reaches none of its switches "
                   f"mean {g['mean']:.3f}, p99 {g['p99']:.3f}, p99.9 {g['p999']:.3f}; bisection fraction mean "
                   f"{b['mean']:.4f}, p99 {b['p99']:.4f}")
    a = r["availability"]
    out.append("")
    out.append(f"availability: {_pct(a['share_meeting'])} ± {_pct(a['stderr'])} of states keep bisection >= "
               f"{a['min_bisection_fraction']:g} of intact; required {_pct(a['share_required'])}"
               f"{'' if a['required_in_spec'] else ' (default; no requirements.availability in the spec)'}: "
               f"{'ok' if a['ok'] else 'NOT MET'}")
    out.append("")
    out.append(h("criticality (expected loss per position, first order)"))
    for p in r["criticality"]["positions"][:12]:
        out.append(f"{'- ' if md else '  '}{p['position']} ({p['class']}, {p['units']:,}): "
                   f"{p['expected_gpus_cut_off']:.4f} GPUs cut off, {p['expected_bisection_lost']:.2e} bisection lost "
                   f"(one down: {p['one_down_gpus_cut_off']} GPUs, {p['one_down_bisection_lost']:.4f} bisection)")
    s = r["spares"]
    out.append("")
    out.append(h(f"spares for {s['window_days']:g} days at {s['confidence']:g} confidence"))
    for cls, x in s["classes"].items():
        out.append(f"{'- ' if md else '  '}{cls}: {x['expected_failures']:.2f} expected failures, stock {x['stock']}")
    if "state" in r:
        st = r["state"]
        out.append("")
        out.append(h(f"given state: {len(st['down'])} down"))
        out.append(f"  {st['gpus_cut_off']} GPUs cut off, bisection {st['bisection_fraction']:.4f} of intact; "
                   f"delivers {st['delivery']:.4f} (GPUs reached x bisection)")
        for x in st["repairs"]:
            out.append(f"{'- ' if md else '  '}repair {x['repair']} ({x['class']}): restores {x['delivery_restored']:.4f} delivery "
                       f"({x['gpus_restored']} GPUs, {x['bisection_restored']:.4f} bisection)")
    return out


def resilience_text(r: dict, markdown: bool = False) -> str:
    return "\n".join(_lines(r, markdown)) + "\n"
