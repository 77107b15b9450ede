"""Analyses over a plan that return findings (capacity, bisection, redundancy, ...)."""
