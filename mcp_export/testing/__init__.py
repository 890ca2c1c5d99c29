"""Test cases of an agent's tools: run them as served calls on one or more models and judge them.

``expect`` checks one call's outcome against a case's expectations, ``judge`` asks a model
whether an answer meets a case's ``judge`` criterion, ``run`` runs cases × models × repeats
through the agent's own MCP server, ``report`` writes JUnit XML and JSON.
"""
