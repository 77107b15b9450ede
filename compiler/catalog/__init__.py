"""Hardware facts as data: servers, switches and media, with their sources.

The built-in catalog lives in `data/*.yaml`; a spec's `catalog:` file may add
entries or override built-in ones by id.
"""

from .load import Catalog, load_catalog

__all__ = ["Catalog", "load_catalog"]
