"""Strict parsing of plain data (YAML/JSON) into typed, frozen dataclasses.

Unknown keys, missing keys, wrong types and numbers out of their range are errors that
name the dotted path of the offending key, e.g. ``pretraining.budget_steps: expected int, got
'abc'`` or ``pretraining.batch_size: -8 must be at least 1``. This is the config's schema:
there is no second copy of it to drift. A number's range is part of its type
(``Annotated[int, Bounds(low=1)]``, spelled ``Count`` and the like in
:mod:`pipeline.config.bounds`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from typing import Annotated, Any, Literal, Union

from pipeline.config.bounds import Bounds, Items
from pipeline.errors import PipelineError

# Every text of a config reaches a job as part of one command-line word (its spec as JSON), which
# Linux caps at 128 KiB: a title or description this long is a mistake, refused where it is set.
MAX_TEXT_LENGTH = 10_000


def parse(cls: type, data: Any, path: str = "") -> Any:
    """Build ``cls`` (a dataclass or a typing annotation) from plain data, strictly."""
    return _parse(cls, data, path or cls.__name__)


def json_argument(text: str, where: str) -> Any:
    """Parse a JSON command-line value; a typo is one line naming ``where``."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise PipelineError(f"{where} is not valid JSON ({error.msg} at column {error.colno})") from None


def parse_json(cls: type, text: str, where: str, option: str = "--spec") -> Any:
    """Parse a stage's JSON option (its spec, passed by Snakemake) strictly into ``cls``."""
    return parse(cls, json_argument(text, f"{where}: {option}"), where)


def to_plain(value: Any) -> Any:
    """The inverse of :func:`parse`: dataclasses and tuples back to JSON-able data."""
    if dataclasses.is_dataclass(value):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value


def _describe(data: Any) -> str:
    text = repr(data)
    return text if len(text) <= 60 else text[:57] + "..."


def _parse(annotation: Any, data: Any, path: str) -> Any:
    if dataclasses.is_dataclass(annotation):
        return _parse_dataclass(annotation, data, path)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Annotated:
        value = _parse(args[0], data, path)
        for meta in args[1:]:
            if isinstance(meta, Bounds) and (violation := meta.violation(value)):
                raise PipelineError(f"{path}: {value!r} {violation}")
            if isinstance(meta, Items):
                _check_items(meta, value, path)
        return value
    if origin in (Union, types.UnionType):
        if data is None and type(None) in args:
            return None
        non_none = [a for a in args if a is not type(None)]
        errors = []
        for option in non_none:
            try:
                return _parse(option, data, path)
            except PipelineError as error:
                errors.append(str(error))
        raise PipelineError(errors[0] if len(errors) == 1 else f"{path}: {_describe(data)} matches none of {non_none}")
    if origin is Literal:
        if data not in args:
            raise PipelineError(f"{path}: {_describe(data)} is not one of {list(args)}")
        return data
    if origin in (list, tuple):
        if not isinstance(data, (list, tuple)):
            raise PipelineError(f"{path}: expected a list, got {_describe(data)}")
        item_type = args[0] if args else Any
        return tuple(_parse(item_type, item, f"{path}[{i}]") for i, item in enumerate(data))
    if origin is dict:
        if not isinstance(data, dict):
            raise PipelineError(f"{path}: expected a mapping, got {_describe(data)}")
        key_type, value_type = args
        return {_parse(key_type, k, path): _parse(value_type, v, f"{path}.{k}") for k, v in data.items()}
    if annotation is Any:
        return data
    if annotation is float:
        # YAML reads 1e-3 as a string (no dot before the exponent); accept what is
        # unambiguously a number, never a bool.
        if isinstance(data, bool):
            raise PipelineError(f"{path}: expected a number, got {_describe(data)}")
        value = None
        if isinstance(data, (int, float)):
            value = float(data) if abs(data) < 2**1024 else math.inf
        elif isinstance(data, str):
            try:
                value = float(data)
            except ValueError:
                pass
        if value is None:
            raise PipelineError(f"{path}: expected a number, got {_describe(data)}")
        if not math.isfinite(value):
            raise PipelineError(f"{path}: {_describe(data)} is not a finite number")
        return value
    if annotation is int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise PipelineError(f"{path}: expected an integer, got {_describe(data)}")
        return data
    if annotation in (str, bool):
        if not isinstance(data, annotation):
            raise PipelineError(f"{path}: expected {annotation.__name__}, got {_describe(data)}")
        if annotation is str and len(data) > MAX_TEXT_LENGTH:
            raise PipelineError(f"{path}: {len(data):,} characters, more than the {MAX_TEXT_LENGTH:,} any value of the config may hold")
        return data
    raise TypeError(f"strict.parse cannot handle annotation {annotation!r} at {path}")


def _check_items(items: Items, value: tuple, path: str) -> None:
    if items.non_empty and not value:
        raise PipelineError(f"{path}: must list at least one")
    if items.distinct:
        seen = set()
        for index, item in enumerate(value):
            key = json.dumps(to_plain(item), sort_keys=True)
            if key in seen:
                raise PipelineError(f"{path}[{index}]: {_describe(to_plain(item))} is listed twice")
            seen.add(key)


def _parse_dataclass(cls: type, data: Any, path: str) -> Any:
    if not isinstance(data, dict):
        raise PipelineError(f"{path}: expected a mapping, got {_describe(data)}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise PipelineError(f"{path}.{unknown[0]}: unknown key (known keys: {', '.join(sorted(fields))})")
    hints = typing.get_type_hints(cls, include_extras=True)
    values = {}
    for name, field in fields.items():
        child = f"{path}.{name}"
        if name in data:
            values[name] = _parse(hints[name], data[name], child)
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise PipelineError(f"{child}: missing required key")
    instance = cls(**values)
    check = getattr(instance, "validate", None)
    if check is not None:
        try:
            check()
        except ValueError as error:
            raise PipelineError(f"{path}: {error}") from None
    return instance
