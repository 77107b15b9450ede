"""The reference pages, made from the code at build time so they cannot drift from it.

- spec keys: the spec's JSON Schema (compiler.spec.schema.spec_schema, `clusterc schema`);
- commands and options: the typer app of compiler/cli.py, read as its click commands;
- output files: compiler.render.RENDERERS, each renderer module's docstring, and the files
  each output wrote in the committed examples (out/*/manifest.json), with CSV headers;
- finding codes: every `Finding(...)` constructed under compiler/, read from the source.

mkdocs runs `on_files` below (mkdocs.yml `hooks:`); `python docs/gen_reference.py DIR`
writes the same pages into DIR.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PAGES = {
    "reference/spec.md": "spec_page",
    "reference/cli.md": "cli_page",
    "reference/outputs.md": "outputs_page",
    "reference/findings.md": "findings_page",
}


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ").strip()


# ---------------------------------------------------------------- spec keys

def _type(node: dict, defs: dict) -> str:
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return "object" if "properties" in defs.get(name, {}) else _type(defs.get(name, {}), defs)
    if "enum" in node:
        return " | ".join(f"`{v}`" for v in node["enum"])
    if "const" in node:
        return f"`{node['const']}`"
    if "anyOf" in node or "oneOf" in node:
        parts = [_type(n, defs) for n in node.get("anyOf", node.get("oneOf"))]
        return " or ".join(p for p in dict.fromkeys(parts) if p != "null") + (" or null" if "null" in parts else "")
    kind = node.get("type")
    if kind == "array":
        item = _type(node.get("items", {}), defs)
        return "list of objects" if item == "object" else f"list of {item}"
    if kind == "object" and "additionalProperties" in node and isinstance(node["additionalProperties"], dict):
        return f"map of {_type(node['additionalProperties'], defs)}"
    if isinstance(kind, list):
        return " or ".join(kind)
    text = kind or "any"
    limits = [f"{k} {node[k]}" for k in ("minimum", "maximum") if k in node]
    if "pattern" in node:
        limits.append(f"pattern `{node['pattern']}`")
    return text + (f" ({', '.join(limits)})" if limits else "")


def _objects(node: dict, defs: dict) -> list[str]:
    """The definitions a property's value may be an object of (directly or as list items)."""
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return [name] if "properties" in defs.get(name, {}) else []
    found: list[str] = []
    for sub in node.get("anyOf", []) + node.get("oneOf", []):
        found += _objects(sub, defs)
    if node.get("type") == "array":
        found += _objects(node.get("items", {}), defs)
    if node.get("type") == "object" and isinstance(node.get("additionalProperties"), dict):
        found += _objects(node["additionalProperties"], defs)
    return found


def spec_keys(schema: dict | None = None) -> list[tuple[str, dict, bool]]:
    """Every key of the spec as a dotted path (`fabric.switch`, `layout.racks[].name`), its
    schema node and whether it is required, walking the schema from its root."""
    if schema is None:
        from compiler.spec.schema import spec_schema
        schema = spec_schema()
    defs = schema.get("$defs", {})
    rows: list[tuple[str, dict, bool]] = []

    def walk(obj: dict, prefix: str, seen: tuple[str, ...]) -> None:
        required = set(obj.get("required", []))
        for key, node in obj.get("properties", {}).items():
            path = prefix + key
            rows.append((path, node, key in required))
            for name in _objects(node, defs):
                if name in seen:
                    continue
                many = node.get("type") == "array" or any(s.get("type") == "array" for s in node.get("anyOf", []))
                mapping = node.get("type") == "object" and isinstance(node.get("additionalProperties"), dict)
                walk(defs[name], path + ("[]." if many else ".<name>." if mapping else "."), seen + (name,))
            # an inline object (not a definition), e.g. oversubscription's {leaf, spine}
            for sub in [node] + node.get("anyOf", []):
                if "properties" in sub and "$ref" not in sub:
                    walk(sub, path + ".", seen)

    walk(schema, "", ())
    return rows


def spec_page() -> str:
    from compiler.spec.schema import spec_schema
    schema = spec_schema()
    defs = schema.get("$defs", {})
    out = ["# Spec keys", "",
           "Every key a spec may hold, generated from the spec's JSON Schema (`clusterc schema` prints it; "
           "editors validate specs against it). A key `a.b` is `b` inside `a`; `a[].b` is `b` in each item "
           "of the list `a`. Unknown keys are an error.", ""]
    rows = spec_keys(schema)
    head = ["| key | type | default | meaning |", "|---|---|---|---|"]

    def meaning(node: dict) -> str:
        """The key's description, else that of the object it holds."""
        if node.get("description"):
            return node["description"]
        for sub in [node] + node.get("anyOf", []) + [node.get("items", {})]:
            ref = sub.get("$ref", "").rsplit("/", 1)[-1]
            if defs.get(ref, {}).get("description"):
                return defs[ref]["description"]
        return ""

    def row(path: str, node: dict, required: bool) -> str:
        default = "required" if required else (f"`{json.dumps(node['default'])}`" if "default" in node else "")
        return f"| `{path}` | {_cell(_type(node, defs))} | {_cell(default)} | {_cell(meaning(node))} |"

    sections = {p.split(".")[0].split("[")[0] for p, _, _ in rows if "." in p}

    def top_row(path: str, node: dict, required: bool) -> str:
        text = row(path, node, required)
        return text[:-2] + f"keys in [`{path}`](#{path})" + " |" if path in sections and text.endswith("|  |") else text

    out += ["## Top level", ""] + head + [top_row(*r) for r in rows if "." not in r[0]]
    section = None
    for path, node, required in rows:
        if "." not in path:
            continue
        top = path.split(".")[0].split("[")[0]
        if top != section:
            section = top
            out += ["", f"## `{top}`", ""] + head
        out.append(row(path, node, required))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- commands

def cli_commands() -> list[tuple[str, object]]:
    """(full name, click command) for every command of the CLI, groups' subcommands included."""
    import typer

    from compiler.cli import app
    found: list[tuple[str, object]] = []

    def walk(cmd, name: str) -> None:
        if hasattr(cmd, "commands"):  # a group (typer may carry its own copy of click)
            for sub_name in sorted(cmd.commands):
                walk(cmd.commands[sub_name], f"{name} {sub_name}".strip())
        else:
            found.append((name, cmd))

    walk(typer.main.get_command(app), "")
    return found


def _is_argument(param) -> bool:
    return param.param_type_name == "argument"


def _param_type(param) -> str:
    """What a parameter takes: its choices, or the Python type it is annotated with."""
    import enum
    import typing
    annotation = param.type_descriptor.annotation
    args = typing.get_args(annotation)
    many = bool(args) and typing.get_origin(annotation) in (list, typing.List)
    base = args[0] if many else annotation
    if args and not many:  # Optional[X]
        base = next(a for a in args if a is not type(None))
    if isinstance(base, type) and issubclass(base, enum.Enum):
        text = " | ".join(str(m.value) for m in base)
    elif getattr(param, "is_flag", False):
        text = "flag"
    else:
        text = {"Path": "path", "str": "text", "int": "integer", "float": "number"}.get(
            getattr(base, "__name__", str(base)), getattr(base, "__name__", str(base)))
    return f"{text} (one or more)" if many else text


def cli_page() -> str:
    out = ["# Commands", "",
           "Every command and option of `clusterc`, generated from the CLI itself (`clusterc COMMAND --help` "
           "prints the same). Exit codes: 0 success, 1 a check failed or a gate was hit, 2 an invalid spec "
           "or input.", ""]
    for name, cmd in cli_commands():
        args = " ".join(p.name.upper() + ("..." if p.nargs == -1 else "")
                        for p in cmd.params if _is_argument(p))
        out += [f"## `clusterc {name}`", "", f"```\nclusterc {name} [OPTIONS] {args}\n```".replace("  ", " "), "",
                (cmd.help or "").strip(), ""]
        params = [p for p in cmd.params if p.name != "help"]
        if params:
            out += ["| argument or option | type | default | meaning |", "|---|---|---|---|"]
            for p in params:
                if _is_argument(p):
                    label = p.name.upper()
                else:
                    label = ", ".join(p.opts + p.secondary_opts)
                kind = _param_type(p)
                default = "" if p.default in (None, (), False) else f"`{getattr(p.default, 'value', p.default)}`"
                if p.required:
                    default = "required"
                out.append(f"| `{label}` | {_cell(kind)} | {_cell(default)} | {_cell(getattr(p, 'help', '') or '')} |")
            out.append("")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- outputs

def _doc_head(module) -> str:
    doc = (module.__doc__ or "").strip()
    return doc.split("\n\n")[0].replace("\n", " ") if doc else ""


def output_files() -> dict[str, dict[str, str]]:
    """output name -> {file: the committed example that has it}, from out/*/manifest.json."""
    files: dict[str, dict[str, str]] = {}
    for manifest in sorted((ROOT / "out").glob("*/manifest.json")):
        for output, names in json.loads(manifest.read_text())["outputs"].items():
            for name in names:
                files.setdefault(output, {}).setdefault(name, manifest.parent.name)
    return files


def _collapse(names: list[str]) -> list[tuple[str, str, int]]:
    """(kind, an example file, how many files of that kind the examples hold), in name order.
    Per-device and per-unit files (`configs/leaf-001/frr.conf`, `racks/DH1.A01.svg`,
    `diagrams/su3.svg`) share one kind, so the page lists kinds of file, not every switch:
    a folder level with several names becomes `<name>`, and file names that differ only in
    their numbers become one with `<n>`."""
    split = [name.split("/") for name in names]
    # folder levels (not the top one) that hold several names under one top folder
    varied: dict[tuple[str, int], set[str]] = {}
    for parts in split:
        for depth in range(1, len(parts) - 1):
            varied.setdefault((parts[0], depth), set()).add(parts[depth])
    generic = []
    for parts in split:
        generic.append([p if depth == 0 or depth == len(parts) - 1 or len(varied[(parts[0], depth)]) == 1 else "<name>"
                        for depth, p in enumerate(parts)])
    numbered: dict[str, set[str]] = {}
    for parts in generic:
        numbered.setdefault("/".join(parts[:-1] + [re.sub(r"\d+", "<n>", parts[-1])]), set()).add(parts[-1])
    kinds: dict[str, list[str]] = {}
    for name, parts in zip(names, generic):
        key = "/".join(parts[:-1] + [re.sub(r"\d+", "<n>", parts[-1])])
        kinds.setdefault(key if len(numbered[key]) > 1 else "/".join(parts), []).append(name)
    # many kinds of one extension in one folder (a rack per row, a model per file): one kind
    by_folder: dict[tuple[str, str], list[str]] = {}
    for kind in kinds:
        folder, _, leaf = kind.rpartition("/")
        by_folder.setdefault((folder, leaf.rsplit(".", 1)[-1] if "." in leaf else ""), []).append(kind)
    for (folder, suffix), group in by_folder.items():
        if folder and len(group) > 3 and suffix != "csv":  # CSVs differ in their columns
            merged = [f for kind in group for f in kinds.pop(kind)]
            kinds[f"{folder}/<name>" + (f".{suffix}" if suffix else "")] = sorted(merged)
    return [(kind, files[0], len(files)) for kind, files in sorted(kinds.items())]


def _sheets(path: Path) -> list[str]:
    """A workbook's sheets, those with the same header row as one line (a sheet per rack)."""
    import openpyxl
    book = openpyxl.load_workbook(path, read_only=True)
    groups: dict[tuple, list[str]] = {}
    for sheet in book.worksheets:
        rows = list(sheet.iter_rows(max_row=40, values_only=True))
        first = tuple(v for v in (rows[0] if rows else ()) if v is not None)
        if len(first) >= 3 and all(isinstance(v, str) for v in first):
            key = ("columns", first)
        else:  # a key/value sheet: its row names
            key = ("rows", tuple(r[0] for r in rows if r and isinstance(r[0], str)))
        groups.setdefault(key, []).append(sheet.title)
    lines = []
    for (kind, values), titles in groups.items():
        name = f"sheet `{titles[0]}`" if len(titles) == 1 else f"{len(titles)} sheets (`{titles[0]}`, `{titles[1]}`, ...)"
        shown = ",".join(map(str, values[:10])) + (",..." if len(values) > 10 else "")
        lines.append(f"{name}, {kind}: `{shown}`")
    book.close()
    return lines


def outputs_page() -> str:
    import importlib

    from compiler.render import RENDERERS
    files = output_files()
    out = ["# Output files", "",
           "Every output `clusterc compile` writes (`--only NAME,...` picks some), generated from the "
           "renderer registry (`compiler.render.RENDERERS`) and from what each output wrote in the "
           "committed examples under `out/` (their `manifest.json`; `tests/test_committed_outputs.py` keeps "
           "them equal to what the code writes). CSV files show their header row. An output that wrote "
           "nothing in any example needs a spec feature the examples do not use.", "",
           "| output | fabrics read |", "|---|---|"]
    out += [f"| [`{name}`](#{name}) | {r.reads} |" for name, r in RENDERERS.items()]
    for name, renderer in RENDERERS.items():
        module = importlib.import_module(renderer.render.__module__)
        out += ["", f"## {name}", "", _doc_head(module), ""]
        written = files.get(name, {})
        if not written:
            out += ["No committed example writes this output.", ""]
            continue
        for kind, example, count in _collapse(sorted(written)):
            out.append(f"- `{kind}`" + (f" ({count} in the examples, e.g. `{example}`)" if count > 1 else ""))
            if example.endswith(".csv"):
                header = (ROOT / "out" / written[example] / example).read_text().split("\n", 1)[0]
                out.append(f"    - columns: `{header}`")
            elif example.endswith(".xlsx"):
                out += [f"    - {line}" for line in _sheets(ROOT / "out" / written[example] / example)]
        out.append("")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- finding codes

def _constants(expr: ast.AST | None) -> list[str]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return [expr.value]
    if isinstance(expr, ast.IfExp):
        return _constants(expr.body) + _constants(expr.orelse)
    return []


def _shape(expr: ast.AST) -> str:
    """A message as the reader sees it, its computed parts as `…`: `rack … draws … kW`."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "…" for v in expr.values)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        left, right = _shape(expr.left), _shape(expr.right)
        return (left or "…") + (right or "…") if left or right else ""
    return ""


def finding_codes() -> dict[str, dict]:
    """code -> {severities, modules, kind}: every Finding the code under compiler/ constructs.
    A check's Finding takes (code, severity, ...); the NCCL linter's takes (severity, code, ...).
    A code held in a variable is resolved from the string constants assigned to it in the
    same function."""
    codes: dict[str, dict] = {}
    for path in sorted((ROOT / "compiler").rglob("*.py")):
        tree = ast.parse(path.read_text())
        nccl = "nccl" in path.parts
        functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))] + [tree]
        for scope in functions:
            assigned: dict[str, list[str]] = {}
            for node in ast.walk(scope):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            assigned.setdefault(target.id, []).extend(_constants(node.value))
            for node in ast.walk(scope):
                if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Finding"):
                    continue
                code_at, severity_at = (1, 0) if nccl else (0, 1)
                if len(node.args) <= code_at:
                    continue
                arg = node.args[code_at]
                names = _constants(arg) or (assigned.get(arg.id, []) if isinstance(arg, ast.Name) else [])
                severity = _constants(node.args[severity_at]) if len(node.args) > severity_at else []
                message_at = 3 if nccl else 2
                message = _shape(node.args[message_at]) if len(node.args) > message_at else ""
                module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
                for code in names:
                    entry = codes.setdefault(code, {"severities": set(), "modules": set(), "messages": set(),
                                                     "kind": "NCCL topology lint" if nccl else "check"})
                    if message:
                        entry["messages"].add(message)
                    entry["severities"].update(severity)
                    entry["modules"].add(module)
    return codes


def findings_page() -> str:
    import importlib

    from compiler.check import CHECKS
    codes = finding_codes()
    check_of = {check.run.__module__: name for name, check in CHECKS.items()}
    out = ["# Checks and finding codes", "",
           "Every check `clusterc check` and `clusterc compile` run (the registry `compiler.check.CHECKS`, in "
           "the order of `report/checks.json`) and every finding code the compiler can report, read from the "
           "source (each `Finding(...)` under `compiler/`). A finding's message carries the numbers and units; "
           "here they show as `…`. An `error` fails `clusterc check` and `clusterc compile` (exit 1); a "
           "`warning` is printed; an `info` finding carries a figure (`clusterc check -v` prints it).", "",
           "## Checks", "", "| check | on every fabric | reads | what it measures |", "|---|---|---|---|"]
    for name, check in CHECKS.items():
        module = importlib.import_module(check.run.__module__)
        out.append(f"| `{name}` | {'yes' if check.per_fabric else 'compute fabric'} | "
                   f"{', '.join(f'`{n}`' for n in check.needs)} | {_cell(_doc_head(module))} |")
    out += ["", "Structural invariants (`compiler.check.invariants`) hold for every plan whatever its topology: "
            "a plan that breaks one is the compiler's bug, reported as an error.", ""]
    for kind, title in (("check", "Finding codes"), ("NCCL topology lint", "NCCL topology lint (`clusterc lint-nccl`)")):
        out += [f"## {title}", "", "| code | severity | reported by | message |", "|---|---|---|---|"]
        for code in sorted(c for c, e in codes.items() if e["kind"] == kind):
            entry = codes[code]
            by = ", ".join(f"`{check_of.get(m, m.rsplit('.', 1)[-1])}`" for m in sorted(entry["modules"]))
            severity = ", ".join(sorted(entry["severities"])) or "varies"
            message = "<br>".join(_cell(m) for m in sorted(entry["messages"])[:3])
            out.append(f"| `{code}` | {severity} | {by} | {message} |")
        out.append("")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- mkdocs hook

def on_files(files, config):
    from mkdocs.structure.files import File
    for uri, maker in PAGES.items():
        files.append(File.generated(config, uri, content=globals()[maker]()))
    return files


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "site-reference")
    for uri, maker in PAGES.items():
        (target / uri).parent.mkdir(parents=True, exist_ok=True)
        (target / uri).write_text(globals()[maker]())
        print(target / uri)
