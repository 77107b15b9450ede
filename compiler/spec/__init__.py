"""The input language: spec models, the position-keeping YAML loader, JSON Schema."""
