"""JSON Schema of the spec language, for editors and for tools that write specs."""

from __future__ import annotations

from .model import Spec


def spec_schema() -> dict:
    schema = Spec.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "clusterc spec"
    return schema
