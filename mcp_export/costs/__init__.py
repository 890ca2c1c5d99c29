"""What model calls cost: the price table (Preferences and the agent file) and costs of runs."""
