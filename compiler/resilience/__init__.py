"""`clusterc resilience`: what a fabric delivers on a normal day of failures (components
down at their fleet's steady-state unavailability), which components cost most, what
spares to stock, and what a given set of failures loses and which repair restores most."""

from .components import CLASSES, Components, components_of
from .errors import ResilienceError
from .rates import load_rates
from .report import resilience_report

__all__ = ["CLASSES", "Components", "ResilienceError", "components_of", "load_rates", "resilience_report"]
