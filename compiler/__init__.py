"""clusterc: a declarative compiler for GPU-cluster networks.

Pipeline (see ARCHITECTURE.md): spec (YAML) -> Spec -> Design -> Plan -> Findings / outputs.

The Python API (compiler/api.py): `plan = compiler.build("spec.yaml")`, then
`plan.summary()`, `plan.check()`, `plan.write("out/")`, `plan.to_networkx()`.
Names load on first use, so `import compiler` (and the CLI's start) stays light.
"""

__version__ = "0.1.0"

__all__ = ["build", "CompiledPlan", "SpecInvalid", "Diagnostic", "__version__"]

_LAZY = {"build": "api", "CompiledPlan": "api", "SpecInvalid": "diagnostics", "Diagnostic": "diagnostics"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'compiler' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
