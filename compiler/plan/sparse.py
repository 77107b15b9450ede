"""scipy's sparse matrices and graph algorithms, imported on their first call.

Importing scipy.sparse.csgraph costs ~0.35 s of CPU (it pulls scipy.sparse.linalg and
scipy.linalg), and only the checks, the traffic model and the media choice of a plan with
a physical layout call it. Every module that needs it imports these names from here, so
that `clusterc compile` forks its render workers before paying for scipy: the worker that
runs the checks imports it while the compile's own process renders
(compiler/render/parallel.py), and `clusterc validate` never imports it. Type checkers
see scipy's own names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scipy.sparse import block_diag as block_diag
    from scipy.sparse import coo_matrix as coo_matrix
    from scipy.sparse import csr_matrix as csr_matrix
    from scipy.sparse.csgraph import connected_components as connected_components
    from scipy.sparse.csgraph import dijkstra as dijkstra
    from scipy.sparse.csgraph import maximum_flow as maximum_flow
    from scipy.sparse.csgraph import shortest_path as shortest_path
else:
    import importlib

    def _on_first_call(module: str, name: str) -> Any:
        """scipy's `module.name`, imported when first called (looked up on each call, so
        the name stays scipy's own)."""
        def call(*args: Any, **kwargs: Any) -> Any:
            return getattr(importlib.import_module(module), name)(*args, **kwargs)

        call.__name__ = name
        return call

    csr_matrix = _on_first_call("scipy.sparse", "csr_matrix")
    coo_matrix = _on_first_call("scipy.sparse", "coo_matrix")
    block_diag = _on_first_call("scipy.sparse", "block_diag")
    connected_components = _on_first_call("scipy.sparse.csgraph", "connected_components")
    dijkstra = _on_first_call("scipy.sparse.csgraph", "dijkstra")
    maximum_flow = _on_first_call("scipy.sparse.csgraph", "maximum_flow")
    shortest_path = _on_first_call("scipy.sparse.csgraph", "shortest_path")
