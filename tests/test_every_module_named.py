"""Every module of compiler/ has a test that names it: imports it, or names its module path
(compiler.render.bom, compiler/render/bom.py), or it is a registered unit whose registry a
test walks entry by entry (REGISTRY_WALKS), or it is in EXERCISED_BY with the test that
exercises it and says so in its own text. A module no test names is code whose breakage
only shows, if at all, as some other test's puzzling failure."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from .conftest import ROOT

TESTS = ROOT / "tests"

# Registries a test walks whole: a unit registered there is run by that test, whatever its
# module is called. registry (module, attribute) -> the test that walks it.
REGISTRY_WALKS = {
    ("compiler.render", "RENDERERS"): "test_output_folder.py::test_manifest_names_the_plan_and_every_file",
    ("compiler.check", "CHECKS"): "test_check_stage.py::test_every_check_declares_exactly_the_figures_it_reads",
    ("compiler.expand.families", "FAMILIES"): "test_families.py::test_every_family_has_every_layer",
    ("compiler.check.families", "FAMILIES"): "test_families.py::test_every_family_has_every_layer",
}

# module -> the test file that exercises it without importing it, and says so (it names
# the module's file, e.g. "render/csvtext.py"). Keep this short: prefer a test that imports it.
EXERCISED_BY: dict[str, str] = {}


def compiler_modules() -> list[str]:
    """Every module of the package (packages' __init__ aside: their modules are what runs)."""
    out = []
    for path in sorted((ROOT / "compiler").rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        if rel.name != "__init__":
            out.append(".".join(rel.parts))
    return out


def _tests_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(TESTS.rglob("*.py")) if p.name != Path(__file__).name)


def named_in(module: str, text: str) -> bool:
    """`module` imported or named in `text`: its dotted name, its file's path (from the
    repository or from compiler/), or `from <package> import ..., <name>, ...`."""
    path = module.replace(".", "/") + ".py"
    if module in text or path in text or path.removeprefix("compiler/") in text:
        return True
    package, _, name = module.rpartition(".")
    imports = re.finditer(rf"from {re.escape(package)} import (\([^)]*\)|[^\n]*)", text)
    return any(re.search(rf"\b{re.escape(name)}\b", m.group(1)) for m in imports)


def registered_modules() -> dict[str, str]:
    """module -> the test that walks the registry it is registered in."""
    out: dict[str, str] = {}
    for (module, attribute), test in REGISTRY_WALKS.items():
        for unit in getattr(importlib.import_module(module), attribute).values():
            for part in (unit, *(getattr(unit, f) for f in ("render", "run", "figures") if hasattr(unit, f))):
                owner = getattr(part, "__module__", None) or getattr(part, "__name__", None)
                if isinstance(owner, str) and owner.startswith("compiler."):
                    out.setdefault(owner, test)
    return out


def test_every_module_is_named_by_a_test():
    text = _tests_text()
    registered = registered_modules()
    unnamed = [m for m in compiler_modules() if not named_in(m, text) and m not in registered and m not in EXERCISED_BY]
    assert not unnamed, (f"{len(unnamed)} module(s) of compiler/ no test names (import it in the test that "
                         f"exercises it, or name its file there and list it in EXERCISED_BY): {unnamed}")


def test_exercised_by_names_tests_that_say_so():
    for module, test in EXERCISED_BY.items():
        file = TESTS / test.split("::")[0]
        assert file.is_file(), (module, test)
        assert named_in(module, file.read_text(encoding="utf-8")), f"{test} does not say it exercises {module}"
    for (module, _), test in REGISTRY_WALKS.items():
        file, _, name = test.partition("::")
        assert f"def {name}(" in (TESTS / file).read_text(encoding="utf-8"), test


def test_the_rule_catches_a_module_no_test_names():
    assert named_in("compiler.render.bom", "from compiler.render import (\n    bom, cabling)")
    assert named_in("compiler.expand.media", "from compiler.expand import media")
    assert named_in("compiler.render.csvtext", "the CSV quoting of render/csvtext.py")
    assert not named_in("compiler.render.bom", "from compiler.render import bom_totals")
    assert not named_in("compiler.plan.naming", "from compiler.plan.model import Plan")
