"""Versions of a tool: what decides its answer, fingerprinted, and how each version did."""
