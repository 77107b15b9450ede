"""clusterc: a declarative compiler for GPU-cluster networks.

Pipeline (see ARCHITECTURE.md): spec (YAML) -> Spec -> Design -> Plan -> Findings / outputs.
"""

__version__ = "0.1.0"
