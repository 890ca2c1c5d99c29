"""The agent's own MCP tool servers: connections, tool lists, permission, calls."""
