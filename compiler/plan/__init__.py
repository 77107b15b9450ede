"""The plan: the compiler's IR and the contract between its stages."""

from .model import Device, LinkTable, Plan, Port, PortLayout

__all__ = ["Device", "LinkTable", "Plan", "Port", "PortLayout"]
