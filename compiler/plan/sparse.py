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
    def csr_matrix(*args: Any, **kwargs: Any) -> Any:
        from scipy.sparse import csr_matrix

        return csr_matrix(*args, **kwargs)

    def coo_matrix(*args: Any, **kwargs: Any) -> Any:
        from scipy.sparse import coo_matrix

        return coo_matrix(*args, **kwargs)

    def block_diag(*args: Any, **kwargs: Any) -> Any:
        from scipy.sparse import block_diag

        return block_diag(*args, **kwargs)

    def connected_components(*args: Any, **kwargs: Any) -> Any:
        from scipy.sparse.csgraph import connected_components

        return connected_components(*args, **kwargs)

    def dijkstra(*args: Any, **kwargs: Any) -> Any:
        from scipy.sparse.csgraph import dijkstra

        return dijkstra(*args, **kwargs)

    def maximum_flow(*args: Any, **kwargs: Any) -> Any:
        from scipy.sparse.csgraph import maximum_flow

        return maximum_flow(*args, **kwargs)

    def shortest_path(*args: Any, **kwargs: Any) -> Any:
        from scipy.sparse.csgraph import shortest_path

        return shortest_path(*args, **kwargs)
