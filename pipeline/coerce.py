"""Build a model's frozen config dataclass from plain config values, checking them
against the dataclass's own annotations.

This is what ``OmegaConf.structured`` + ``to_object`` would do, without its limits:
OmegaConf cannot type a field such as ``tuple[tuple[int, int], ...]`` (an HDD zone's
slipped-sector runs), and building its node tree costs tens of milliseconds per
config. The rules follow OmegaConf's:

- a key the dataclass does not have is an error; a field without a default must be
  given;
- ``int`` / ``float`` / ``bool`` / ``str`` fields convert the way OmegaConf converts
  (``"5"`` -> 5 for an int, 3 -> 3.0 for a float, 1024 -> ``"1024"`` for a str,
  ``"true"`` -> True), and reject what OmegaConf rejects (``"abc"`` for an int, a bool
  for a number); an ``int`` field whose name ends in ``_bytes`` also takes a size
  string as fio writes it (``4k``, ``512g``, ``4t``: binary multiples);
- ``X | None``, ``tuple[X, ...]``, ``tuple[X, Y]``, ``list[X]``, ``dict[str, X]`` and
  nested dataclasses are checked element by element; ``Any`` passes through;
- an ``int`` must fit in 64 bits (``INT_MIN`` .. ``INT_MAX``, ``check_int``): every
  integer field of every section is checked here, once;
- then the dataclass is constructed, so its ``__post_init__`` range checks run.

Every error is a ``ConfigError`` naming the full key (``device.hdd0.zones[2].first_cyl``).
"""
from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from models.units import parse_size

from .errors import ConfigError, describe, did_you_mean, from_value_error

# Every integer of a config is a BIGINT column of the summary row (Arrow int64) and a
# C long / numpy int64 in the models: values beyond it are refused here, for every
# section, instead of an OverflowError when the row is written or a model computes.
INT_MIN, INT_MAX = -2**63, 2**63 - 1

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def _hints(cls: type) -> dict:
    return typing.get_type_hints(cls)


def _type_name(tp: Any) -> str:
    return {int: "Integer", float: "Float", bool: "Boolean", str: "String"}.get(tp, getattr(tp, "__name__", str(tp)))


def _bad(key: str, value: Any, tp: Any) -> ConfigError:
    return ConfigError(key, f"Value {value!r} of type '{type(value).__name__}' could not be "
                            f"converted to {_type_name(tp)}")


def check_int(value: int, key: str) -> int:
    """``value`` if it fits in a signed 64-bit integer, else ``ConfigError``."""
    if not INT_MIN <= value <= INT_MAX:
        raise ConfigError(key, f"must fit in a 64-bit integer ({INT_MIN} .. {INT_MAX}), "
                          f"got {value}")
    return value


def convert(value: Any, tp: Any, key: str) -> Any:
    """``value`` as type ``tp`` (recursively), or ``ConfigError`` naming ``key``."""
    if tp is Any or tp is object:
        return value
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)

    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        errors = []
        for a in options:
            try:
                return convert(value, a, key)
            except ConfigError as ex:
                errors.append(ex)
        raise errors[0] if len(errors) == 1 else ConfigError(key, f"{value!r} matches none of {tp}")
    if value is None:
        raise ConfigError(key, f"must not be null (expected {_type_name(tp)})")

    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if isinstance(value, tp):
            return value
        if not isinstance(value, dict):
            raise ConfigError(key, f"expected a mapping of {tp.__name__} fields, got {value!r}")
        return build(tp, value, key)

    if origin in (tuple, list) or tp in (tuple, list):
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise ConfigError(key, f"expected a list, got {value!r}")
        kind = origin or tp
        if kind is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if len(value) != len(args):
                raise ConfigError(key, f"expected {len(args)} values, got {len(value)}")
            return tuple(convert(v, a, f"{key}[{i}]") for i, (v, a) in enumerate(zip(value, args)))
        elem = args[0] if args else Any
        out = [convert(v, elem, f"{key}[{i}]") for i, v in enumerate(value)]
        return tuple(out) if kind is tuple else out

    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise ConfigError(key, f"expected a mapping, got {value!r}")
        vt = args[1] if len(args) == 2 else Any
        return {k: convert(v, vt, f"{key}.{k}") for k, v in value.items()}

    if tp is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise _bad(key, value, tp)
    if tp is int or tp is float:
        if isinstance(value, bool):
            raise _bad(key, value, tp)
        if isinstance(value, int) or (tp is float and isinstance(value, float)):
            # an int stays as it is; a float field takes ints
            return check_int(value, key) if tp is int else tp(value)
        if isinstance(value, str):
            if tp is int and key.endswith("_bytes"):
                # a size key takes fio's size strings (4k, 512g, 4t; k = 1024)
                try:
                    return check_int(parse_size(value, key), key)
                except ValueError as ex:
                    raise ConfigError(key, str(ex).split(": ", 1)[-1]) from None
            try:
                out = tp(value.strip())
            except (ValueError, OverflowError):
                raise _bad(key, value, tp) from None
            return check_int(out, key) if tp is int else out
        raise _bad(key, value, tp)
    if tp is str:
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        raise _bad(key, value, tp)
    if isinstance(tp, type):
        if isinstance(value, tp):
            return value
        raise ConfigError(key, f"expected {tp.__name__}, got {value!r}")
    return value


def build(cls_or_base: Any, values: dict | None, prefix: str) -> Any:
    """Construct ``cls_or_base`` (a dataclass type, or an instance - a preset - whose
    field values are the defaults) from ``values``."""
    values = dict(values or {})
    if isinstance(cls_or_base, type):
        cls, base = cls_or_base, None
    else:
        cls, base = type(cls_or_base), cls_or_base
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    for k in values:
        if k not in fields:
            raise ConfigError(f"{prefix}.{k}" if prefix else str(k),
                              f"Key '{k}' not in '{cls.__name__}'" + did_you_mean(k, fields))
    kwargs = {}
    for name, f in fields.items():
        key = f"{prefix}.{name}" if prefix else name
        if name in values:
            kwargs[name] = convert(values[name], hints.get(name, Any), key)
        elif base is not None:
            kwargs[name] = getattr(base, name)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ConfigError(key, "Missing mandatory value")
    try:
        return cls(**kwargs)
    except ValueError as ex:
        raise from_value_error(prefix, ex) from None
    except TypeError as ex:
        raise ConfigError(prefix, str(ex).splitlines()[0]) from None


# -- config sections -> dataclasses, for pipeline.spec --------------------------------
def to_object(node: Any, cls: Any, prefix: str) -> Any:
    """Build ``cls`` (or a preset instance's class, from its values) from ``node``,
    checked against the dataclass annotations (``pipeline.coerce``)."""
    if node is not None and not isinstance(node, dict):
        raise ConfigError(prefix, f"expected a mapping, got {node!r}")
    return build(cls, node, prefix)


def container(cfg: DictConfig, key: str) -> Any:
    try:
        node = OmegaConf.select(cfg, key, throw_on_missing=True)
        if isinstance(node, DictConfig):
            return OmegaConf.to_container(node, resolve=True, throw_on_missing=True)
        return node
    except OmegaConfBaseException as ex:
        err = describe(ex)
        raise ConfigError(err.key if err and err.key else key,
                          err.message if err else str(ex)) from None


def typed_entry(entry: Any, kinds: dict, prefix: str, extras: dict | None = None):
    if not isinstance(entry, dict):
        raise ConfigError(prefix, f"expected a mapping with a 'type' key, got {entry!r}")
    entry = dict(entry)
    typ = entry.pop("type", None)
    if typ is None:
        raise ConfigError(f"{prefix}.type", f"missing; one of {', '.join(sorted(kinds))}")
    if typ not in kinds:
        known = ", ".join(sorted(kinds)) or "none registered"
        raise ConfigError(f"{prefix}.type", f"unknown type {typ!r} (known: {known})"
                          + did_you_mean(typ, kinds))
    taken = {}
    for k, default in (extras or {}).items():
        taken[k] = entry.pop(k, default)
    base = kinds[typ].config
    presets = getattr(kinds[typ], "presets", {})
    if "preset" in entry and presets:
        name = entry.pop("preset")
        if name not in presets:
            raise ConfigError(f"{prefix}.preset", f"unknown preset {name!r} for {typ} "
                              f"(known: {', '.join(sorted(presets))})" + did_you_mean(name, presets))
        taken["preset"] = name
        try:
            base = presets[name]()
        except ValueError as ex:
            raise from_value_error(prefix, ex) from None
    return typ, to_object(entry, base, prefix), taken
