"""The headless runtime: providers, the chat session, the agent's toolbox, the history store, the
MCP server, client-config export and the CLI. Never imports Qt.

This package exports nothing itself: code imports each name from the module that defines it. The
command line imports only the module of the command it runs, and a served agent imports the call
pipeline, its toolbox and its provider with its first call.
"""
