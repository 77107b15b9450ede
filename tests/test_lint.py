"""The linter and type-checker gates: `ruff check` ([tool.ruff] in pyproject.toml) and
`mypy` ([tool.mypy]) find nothing in compiler/, and each configuration does catch what it
is there for."""

from __future__ import annotations

import hashlib
import importlib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from .conftest import ROOT

# What the gate checks; tests/ follows when its findings are cleared.
LINTED = ["compiler"]


def _ruff(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    # --no-cache: no .ruff_cache folder left in the repository.
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing():
    r = _ruff(*LINTED)
    assert r.returncode == 0, "ruff check " + " ".join(LINTED) + " (fix, or see [tool.ruff] in pyproject.toml):\n" + r.stdout + r.stderr


def test_ruff_config_catches_a_zip_without_strict_and_an_unused_name():
    """The gate is not vacuous: the repository's configuration flags a zip() that would
    silently drop the tail of the longer column, and a name imported for nothing."""
    code = "import os\n\n\ndef pairs(a: list[int], b: list[int]) -> list[tuple[int, int]]:\n    return list(zip(a, b))\n"
    r = _ruff("--output-format", "concise", "--stdin-filename", "compiler/probe.py", "-", stdin=code)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "B905" in r.stdout and "F401" in r.stdout, r.stdout


def _mypy(*args: str) -> subprocess.CompletedProcess:
    # The cache lives outside the repository (none left in it) and is kept between runs,
    # where it turns ~20 s of checking into ~2 s; one per checkout, so two clones checked at
    # once (worktrees, CI beside a developer) never read each other's half-written entries.
    checkout = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
    cache = Path(tempfile.gettempdir()) / f"clusterc-mypy-cache-{checkout}"
    return subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def test_mypy_finds_nothing():
    r = _mypy()  # the files and settings of [tool.mypy]
    assert r.returncode == 0, "mypy (see [tool.mypy] in pyproject.toml):\n" + r.stdout + r.stderr
    assert "Success" in r.stdout, r.stdout


def test_mypy_config_catches_an_unchecked_optional(tmp_path):
    """The gate is not vacuous: with the repository's settings, reading an attribute of a
    value that may be None is an error, in an unannotated function too (check_untyped_defs)."""
    code = ("import re\n\n\ndef first_word(text):\n    return re.match(r'\\w+', text).group()\n\n\n"
            "def speed_gbps(speeds: dict[str, int], port: str) -> int:\n    return speeds.get(port) + 0\n")
    probe = tmp_path / "probe.py"
    probe.write_text(code)
    r = _mypy("--no-incremental", str(probe))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "[union-attr]" in r.stdout and "[operator]" in r.stdout, r.stdout


# --- self-contained code: compiler/ and templates/ point at nothing outside the repository ---

# Documents that live beside the repository, not in it, and this project's issue numbers:
# a fact's source goes in the catalog's `sources` fields (a public address) or the docs site.
OUTSIDE = re.compile(r"\.\./shared|shared/reference|\b(?:designs|hardware|formats|nccl-topology|real-components)\.md\b"
                     r"|\bissues?\s+#?\d+|(?<![\w&/])#\d{1,2}\b|(?<![\w&/])#\d{4,5}\b|\b[\w.-]+#\d+\b")
# A module or file named in a comment or docstring: compiler/x/y.py, x/y.py under compiler/,
# benchmarks/ or tests/, or compiler.x.y.
_PACKAGES = sorted(p.name for p in (ROOT / "compiler").iterdir() if (p / "__init__.py").exists())
NAMED_FILE = re.compile(r"(?<![\w./-])((?:compiler/|benchmarks/|tests/)?(?:" + "|".join(_PACKAGES) + r")(?:/\w+)*\.py"
                        r"|(?:benchmarks|tests)/\w+\.py)\b")
NAMED_MODULE = re.compile(r"\bcompiler(?:\.\w+)+")
# A folder named the same way: x/y/ under compiler/, or one under tests/, templates/, specs/ or docs/
NAMED_FOLDER = re.compile(r"(?<![\w./-])((?:compiler/)?(?:" + "|".join(_PACKAGES) + r")(?:/\w+)*/"
                          r"|(?:tests|templates|specs|docs)/(?:[\w-]+/)*)(?![\w-])")


def _source_files() -> list[Path]:
    files = [p for p in (ROOT / "compiler").rglob("*") if p.is_file() and p.suffix in (".py", ".yaml", ".json")
             and "templates" not in p.relative_to(ROOT / "compiler").parts[:1] and "__pycache__" not in p.parts]
    return sorted(files + [p for p in (ROOT / "templates").rglob("*") if p.is_file()])


def _exists(ref: str) -> bool:
    ref = ref.removeprefix("compiler/")
    return any((base / ref).exists() for base in (ROOT / "compiler", ROOT))


def _module_exists(name: str) -> bool:
    """compiler.x.y is a module, or an attribute of module compiler.x (a function, a class)."""
    try:
        importlib.import_module(name)
        return True
    except ImportError:
        parent, _, attr = name.rpartition(".")
        try:
            return hasattr(importlib.import_module(parent), attr)
        except ImportError:
            return False


def test_code_and_templates_point_at_nothing_outside_the_repository():
    found = [f"{p.relative_to(ROOT)}:{i}: {m.group()!r}" for p in _source_files()
             for i, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             for m in OUTSIDE.finditer(line)]
    assert not found, "references to documents outside the repository or to issue numbers:\n" + "\n".join(found)


def test_modules_named_in_code_and_templates_exist():
    found = [f"{p.relative_to(ROOT)}:{i}: {ref}" for p in _source_files()
             for i, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             for ref in [m.group(1) for m in (*NAMED_FILE.finditer(line), *NAMED_FOLDER.finditer(line))
                         if not _exists(m.group(1))]
             + [m.group() for m in NAMED_MODULE.finditer(line) if not _module_exists(m.group())]]
    assert not found, "modules named that do not exist:\n" + "\n".join(found)


def test_the_reference_patterns_catch_what_they_are_for():
    for text in ("see ../shared/reference/formats.md 4.1", "(hardware.md section 6)", "issue 4 item 5", "fixed in #12",
                 "NVIDIA/nccl#1264"):
        assert OUTSIDE.search(text), text
    for text in ('colour="#555555"', "color:#222", "github.com/NVIDIA/nccl/issues/1182", "&#160;"):
        assert not OUTSIDE.search(text), text
    assert not _exists("render/nowhere.py") and _exists("render/cabling.py") and _exists("compiler/plan/model.py")
    folders = [m.group(1) for m in NAMED_FOLDER.finditer("closed forms (check/closed_forms/); a sample in tests/data/lldp/eos/.")]
    assert folders == ["check/closed_forms/", "tests/data/lldp/eos/"] and not any(map(_exists, folders))
    assert _exists("check/families/") and not NAMED_FOLDER.search("catalog/data/nos.yaml")
    assert not _module_exists("compiler.render.nowhere") and _module_exists("compiler.plan.model.Plan")
