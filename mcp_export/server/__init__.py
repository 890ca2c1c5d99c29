"""The served MCP server: tools, calls, sampling, results, stdio and HTTP, its history."""
