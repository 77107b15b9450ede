"""Which OS RDMA device (mlx5_N) is behind each fabric port of a catalog server: what a
host's InfiniBand node description and its exporters name the port by."""

from __future__ import annotations

from functools import lru_cache

from .load import load_catalog


@lru_cache(maxsize=1)
def _builtin():
    return load_catalog()


def nic_devices(layout_id: str) -> list[str | None]:
    """Per port of a server port layout (`<server>/<nic group>`, panel order), its RDMA
    device where the built-in catalog says; [] for other layouts or unknown servers."""
    server_id, _, group = layout_id.partition("/")
    server = _builtin().servers.get(server_id)
    if server is None or group not in server.nic_groups:
        return []
    return [p.device for p in server.nic_groups[group].ports]
