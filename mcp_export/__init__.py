"""The headless runtime: providers, the chat session, the agent's toolbox, the history store, the
MCP server, client-config export and the CLI. Never imports Qt.

The names below are what the studio (``app``) may use. They load on first use (PEP 562), so
``metaagent validate`` does not pay for the MCP SDK (~0.9 s) and a served agent imports a
provider SDK only when it calls a model.
"""
