"""Shared by the built-in planners: task signals, stage ranking, EWMA utility and the plugin shape."""

from .plan import Strategy, make_planner
from .ranking import Weights

__all__ = ["Strategy", "Weights", "make_planner"]
