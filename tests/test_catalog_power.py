"""Every switch, transceiver and cable in the catalog states its published power or says
that none was found: a figure never appears without a source, and budgets use power_w."""

from compiler.catalog import load_catalog


def _parts():
    cat = load_catalog()
    yield from (("switch", s.id, s) for s in cat.switches.values())
    yield from (("transceiver", t.part_number, t) for t in cat.transceivers.values())
    yield from (("cable", c.id, c) for c in cat.cables.values() if c.fiber not in ("trace", "vendor"))


def test_every_published_figure_names_its_source_and_every_gap_says_so():
    seen = 0
    for kind, ident, part in _parts():
        p = part.power
        if p.typical_w is None and p.max_w is None:
            assert p.source is None and "no published figure" in p.note, (kind, ident)
            assert part.power_w is None, f"{kind} {ident}: a budget figure without a published one"
        else:
            assert p.source, (kind, ident)
            if kind == "switch":  # where the figure was read: the vendor's page, or a third party quoting it
                assert p.confidence in ("vendor", "secondary"), (kind, ident)
            # the budget figure is one of the published ones (never a third number)
            assert part.power_w in (p.typical_w, p.max_w), (kind, ident, part.power_w)
        seen += 1
    assert seen >= 20


def test_known_datasheet_figures():
    cat = load_catalog()
    ns400 = cat.transceivers["MMA4Z00-NS400"].power
    assert (ns400.typical_w, ns400.max_w) == (8, 9)  # hardware.md 3: 8 W typical, 9 W max
    assert cat.switches["tomahawk5"].power.typical_w == 913
    # QM9700, SN5600, Q3400: no vendor page readable; third parties quoting it (hardware.md 5b),
    # kept apart as secondary.
    for sid, typical, most in (("qm9700", 747, 1720), ("sn5600", 940, None), ("q3400", 2900, 7000)):
        p = cat.switches[sid].power
        assert (cat.switches[sid].power_w, p.typical_w, p.max_w, p.confidence) == (typical, typical, most, "secondary")
    # No figure at all, primary or secondary: said so, never 0 W.
    for sid in ("sn5400", "arista-7060x6-64pe", "sn2201"):
        assert cat.switches[sid].power_w is None and cat.switches[sid].power.confidence is None


def test_secondary_switch_power_is_used_and_said(tmp_path):
    """A switch's secondary figure (a third party quoting the vendor page) is counted in the
    BOM, rack power and compare, and each says it is secondary."""
    from compiler.check import run_checks
    from compiler.compare import design_figures
    from compiler.pipeline import build_plan
    from compiler.plan.bom import bill_of_materials

    spec = tmp_path / "s.yaml"
    spec.write_text("name: t\nserver: gb300-nvl72\nservers: 36\n"
                    "fabric: {topology: multi-plane, switch: sn5600, speed_gbps: 400, scalable_unit: 36}\n"
                    "layout:\n  hall: DH1\n  rows: 1\n  racks_per_row: 6\n  rack: {height_u: 48, power_kw: 150}\n")
    plan = build_plan(spec)[1]
    line = next(x for x in bill_of_materials(plan) if x.category == "switch")
    assert (line.quantity, line.unit_power_w, line.total_power_w) == (12, 940, 12 * 940)
    assert line.notes.startswith("power secondary: ") and "940 W" in line.notes
    checks = run_checks(plan)
    found = [f for f in checks.findings if f.code == "RACK_POWER_SECONDARY"]
    assert len(found) == 1 and "sn5600" in found[0].message
    # The switches' rack draw is counted: 12 x 940 W plus their modules; the trays' is unknown.
    from compiler.plan.power import rack_draw
    draw = rack_draw(plan)
    assert draw.known_w.sum() - draw.optics_w.sum() == 12 * 940
    assert design_figures(plan, checks)["power_secondary_for"] == ["sn5600"]
