"""MCP client configs: the entry for each client, install into its file, verify."""
