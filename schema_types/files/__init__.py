"""Agent files on disk: reading (YAML, JSON, the tsagent form) and atomic saves."""
