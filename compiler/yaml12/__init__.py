"""YAML 1.2 (core schema) read with the position of every value: the spec, the catalog and
price files all come through here, so each error can point at its file, line and column."""

from .source import Source, load_yaml_file, load_yaml_text

__all__ = ["Source", "load_yaml_file", "load_yaml_text"]
