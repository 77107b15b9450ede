"""NCCL topology files (NCCL_TOPO_FILE): build the tree from a host topology, write it
the way NCCL's hand-written parser needs, and lint any file against what that parser
accepts (nccl/lint.py)."""
