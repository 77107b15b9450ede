"""bom.csv: what procurement orders, by part number, with quantities and power."""

from __future__ import annotations

from ..check import CheckResults
from ..plan.bom import bill_of_materials
from ..plan.fabrics import fabric_bom, is_multi_fabric
from ..plan.model import Plan
from .csvtext import csv_text
from .writer import OutputDir

HEADER = ["category", "part_number", "description", "quantity", "unit_power_w", "total_power_w", "notes"]


def _watts(value) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def bom_table(plan: Plan) -> tuple[list[str], list[tuple]]:
    """bom.csv's header and rows; report.html shows the same rows."""
    if is_multi_fabric(plan):  # one bill per fabric, labelled in a last column
        rows = [(line.category, line.part_number, line.description, line.quantity, _watts(line.unit_power_w),
                 _watts(line.total_power_w), line.notes, fabric) for fabric, line in fabric_bom(plan)]
        return HEADER + ["fabric"], rows
    rows = [
        (line.category, line.part_number, line.description, line.quantity, _watts(line.unit_power_w),
         _watts(line.total_power_w), line.notes)
        for line in plan.memo("bom", bill_of_materials)
    ]
    return HEADER, rows


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    header, rows = bom_table(plan)
    out.write_text("bom.csv", csv_text(header, rows))
