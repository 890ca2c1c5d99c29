"""JSON-Schema parameter types: the node models, the checks of a tool's schema."""
