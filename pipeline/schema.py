"""``python -m pipeline schema``: the config's JSON Schema, derived from its dataclasses.

The dataclasses of :mod:`pipeline.config` are the one source of truth; this renders them
as ``config/schema.json`` for editors and other tools (a test keeps the committed file
current). Validation at run time stays with :func:`pipeline.workflow.configure.resolve`, whose
messages name the exact key.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import types
import typing
from typing import Annotated, Any, Literal, Union

from pipeline.config import Config
from pipeline.config.bounds import Bounds, Items


def json_schema(annotation: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(annotation):
        hints = typing.get_type_hints(annotation, include_extras=True)
        fields = dataclasses.fields(annotation)
        required = [f.name for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {f.name: json_schema(hints[f.name]) for f in fields},
            "additionalProperties": False,
        }
        if annotation.__doc__ and not annotation.__doc__.startswith(f"{annotation.__name__}("):
            schema["description"] = " ".join(annotation.__doc__.split())
        if required:
            schema["required"] = required
        return schema
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        schema = json_schema(args[0])
        for meta in args[1:]:
            schema.update(bounds_schema(meta) if isinstance(meta, Bounds) else items_schema(meta) if isinstance(meta, Items) else {})
        return schema
    if origin in (Union, types.UnionType):
        return {"anyOf": [json_schema(a) for a in args]}
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (list, tuple):
        return {"type": "array", "items": json_schema(args[0]) if args else {}}
    if origin is dict:
        return {"type": "object", "additionalProperties": json_schema(args[1])}
    simple = {int: "integer", float: "number", str: "string", bool: "boolean", type(None): "null"}
    return {"type": simple[annotation]} if annotation in simple else {}


def items_schema(items: Items) -> dict[str, object]:
    return {**({"minItems": 1} if items.non_empty else {}), **({"uniqueItems": True} if items.distinct else {})}


def bounds_schema(bounds: Bounds) -> dict[str, float]:
    schema = {}
    if bounds.low is not None:
        schema["exclusiveMinimum" if bounds.low_open else "minimum"] = bounds.low
    if bounds.high is not None:
        schema["exclusiveMaximum" if bounds.high_open else "maximum"] = bounds.high
    return schema


def config_schema() -> dict[str, Any]:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Replication config", **json_schema(Config)}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", help="write here instead of standard output")


def run(args: argparse.Namespace) -> None:
    text = json.dumps(config_schema(), indent=2) + "\n"
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(text)
    else:
        print(text, end="")
