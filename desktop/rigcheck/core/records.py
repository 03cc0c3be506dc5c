"""Checked decoding of plain data (JSON, TOML) into frozen dataclass records.

One function, :func:`decode`, walks a dataclass's type annotations and the data side by side, and
refuses anything that does not fit with an :class:`~rigcheck.core.errors.InputError` naming the source
and the field path (``gpus[0].memory_total_bytes: must not be negative``). The Machine snapshot and
the catalog both load through it.

Supported annotations: ``str``, ``int``, ``float``, ``bool``, ``Literal[...]``, ``X | None``,
``tuple[X, ...]``, ``dict[str, X]``, nested dataclasses, and ``Any`` for free-form data.
"""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Callable
from dataclasses import MISSING, fields, is_dataclass
from functools import cache
from typing import Any, Literal, NoReturn, TypeVar, cast, get_args, get_origin

from rigcheck.core.errors import InputError

T = TypeVar("T")

#: numeric fields that may never be negative, by the end of their name
NON_NEGATIVE_SUFFIXES = (
    "_bytes", "_watts", "_mhz", "_cores", "_links", "_gen", "_width", "watts", "cores",
    "_gb", "_gbs", "_tflops", "_tops", "_usd", "_hour", "_lanes", "_bits", "_size", "_layers",
    "_heads", "_dim", "_experts", "_rank", "_window", "_bpw", "_per_weight", "_per_element", "_year",
)  # fmt: skip

_FRIENDLY = {int: "a whole number", float: "a number", bool: "true or false", str: "a string"}


def decode(cls: type[T], data: object, source: str, *, where: str = "", strict: bool = False) -> T:
    """Build a ``cls`` record from ``data``, checking every field against its annotation.

    ``strict`` refuses keys the record does not know (a typo in a catalog file must not vanish);
    without it they are ignored (a newer RigCheck may add fields within the same schema version).
    """
    result: T = _decode(cls, data, where, source, strict)
    return result


def describe(value: object) -> str:
    """How a value looks to a person reading an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {shown!r}"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a table" if value and not all(isinstance(k, str) for k in value) else "an object"
    return type(value).__name__


def _decode(tp: Any, value: object, where: str, source: str, strict: bool) -> Any:
    return _decoder(tp)(value, where, source, strict)


#: a decoder for one annotation: (value, field path, source, strict) -> the checked value
_Decoder = Callable[[object, str, str, bool], Any]


def _fail(expected: str, value: object, where: str, source: str) -> NoReturn:
    raise InputError(source, f"{where or 'top level'}: expected {expected}, got {describe(value)}")


@cache
def _decoder(tp: Any) -> _Decoder:
    """The decoder of one annotation, worked out once per annotation (not once per value: a fleet of
    10,000 reports decodes millions of values, and asking ``typing`` what each annotation is was most
    of the time)."""
    if tp is Any or tp is object:
        return lambda value, where, source, strict: value  # free-form data, checked by its owner
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _union_decoder(tp)
    if origin is Literal:
        allowed = get_args(tp)
        listed = "one of " + ", ".join(repr(a) for a in allowed)

        def literal(value: object, where: str, source: str, strict: bool) -> Any:
            if value not in allowed:
                _fail(listed, value, where, source)
            return value

        return literal
    if origin is tuple:
        item_tp, _ellipsis = get_args(tp)
        item = _decoder(item_tp)

        def sequence(value: object, where: str, source: str, strict: bool) -> Any:
            if not isinstance(value, list | tuple):
                _fail("a list", value, where, source)
            return tuple(item(v, f"{where}[{i}]", source, strict) for i, v in enumerate(value))

        return sequence
    if origin is dict:
        _key_tp, item_tp = get_args(tp)
        item = _decoder(item_tp)

        def table(value: object, where: str, source: str, strict: bool) -> Any:
            if not isinstance(value, dict):
                _fail("an object", value, where, source)
            return {str(k): item(v, f"{where}.{k}", source, strict) for k, v in value.items()}

        return table
    if is_dataclass(tp):
        uses = [0]

        def record(value: object, where: str, source: str, strict: bool) -> Any:
            # compiled on its second use, not here (a record's fields may name records not yet defined)
            # nor on its first: one snapshot decodes each class about once, and compiling (annotations
            # resolved again, the function written and exec'd) cost the GUI's start-up ~8 ms; the
            # reference decoder gives the same result and the same error
            if uses[0] < 1:
                uses[0] += 1
                return _record(tp, value, where, source, strict)
            return _compiled(cast(Any, tp))(value, where, source, strict)

        return record
    scalar = _SCALARS.get(tp)
    if scalar is None:
        raise TypeError(f"records.py cannot decode {tp!r}")  # a programming error, not bad input
    return scalar


def _union_decoder(tp: Any) -> _Decoder:
    args = get_args(tp)
    nullable = type(None) in args
    inner = [a for a in args if a is not type(None)]
    expected = _expected_name(tp)
    only = _decoder(inner[0]) if len(inner) == 1 else None

    def union(value: object, where: str, source: str, strict: bool) -> Any:
        if value is None:
            if nullable:
                return None
            _fail(expected, value, where, source)
        if only is None:
            _fail(expected, value, where, source)
        return only(value, where, source, strict)

    return union


def _bool(value: object, where: str, source: str, strict: bool) -> Any:
    if not isinstance(value, bool):
        _fail("true or false", value, where, source)
    return value


def _int(value: object, where: str, source: str, strict: bool) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        _fail("a whole number", value, where, source)
    _check_range(value, where, source)
    _check_sign(value, where, source)
    return value


def _float(value: object, where: str, source: str, strict: bool) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        _fail("a number", value, where, source)
    _check_range(value, where, source)  # first: math.isfinite(10**400) overflows
    if not math.isfinite(value):
        _fail("a finite number", value, where, source)
    _check_sign(value, where, source)
    return float(value)


def _str(value: object, where: str, source: str, strict: bool) -> Any:
    if not isinstance(value, str):
        _fail("a string", value, where, source)
    return value


_SCALARS: dict[Any, _Decoder] = {bool: _bool, int: _int, float: _float, str: _str}


#: no field of ours holds a number this large (a 64-bit count of bytes); beyond it arithmetic overflows
MAX_MAGNITUDE = 2**63


def _check_range(value: float, where: str, source: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        return  # the caller refuses it as not finite
    if not -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE:
        shown = f"{value:.3g}" if isinstance(value, float) else f"a number of {len(str(abs(value)))} digits"
        raise InputError(source, f"{where or 'top level'}: {shown} is out of range")


def _check_sign(value: float, where: str, source: str) -> None:
    leaf = where.rsplit(".", 1)[-1].split("[", 1)[0]
    if value < 0 and leaf.endswith(NON_NEGATIVE_SUFFIXES):
        raise InputError(source, f"{where}: must not be negative, got {value!r}")


@cache
def _plan(cls: Any) -> tuple[tuple[tuple[str, _Decoder, bool], ...], frozenset[str]]:
    """Per record class, once: (field name, its decoder, required) and the known names.

    Resolving string annotations is most of the cost of decoding; a catalog decodes hundreds of
    records of a dozen classes.
    """
    hints = typing.get_type_hints(cls)
    plan = tuple(
        (f.name, _decoder(hints[f.name]), f.default is MISSING and f.default_factory is MISSING)
        for f in fields(cls)
    )
    return plan, frozenset(f.name for f in fields(cls))


def _decode_record(cls: Any, data: dict[str, Any], where: str, source: str, strict: bool) -> Any:
    plan, known = _plan(cls)
    if strict:
        unknown = sorted(k for k in data if k not in known)
        if unknown:
            path = f"{where}.{unknown[0]}" if where else unknown[0]
            raise InputError(source, f"{path}: unknown field (known: {', '.join(sorted(known))})")
    kwargs: dict[str, Any] = {}
    for name, decode_field, required in plan:
        if name not in data:
            if required:
                raise InputError(
                    source,
                    f"{where}.{name}: required field missing" if where else f"{name}: required field missing",
                )
            continue
        kwargs[name] = decode_field(data[name], f"{where}.{name}" if where else name, source, strict)
    return cls(**kwargs)


def _record(cls: Any, value: object, where: str, source: str, strict: bool) -> Any:
    """The reference decoder of one record; the compiled one (:func:`_compiled`) falls back to it."""
    if not isinstance(value, dict):
        _fail("an object", value, where, source)
    return _decode_record(cls, value, where, source, strict)


def _unknown_fields(cls: Any, data: dict[str, Any], where: str, source: str) -> None:
    known = _plan(cls)[1]
    if not known.issuperset(data):
        _decode_record(cls, data, where, source, True)  # raises, naming the first unknown field


# -- compiled record decoders ----------------------------------------------------------------------
#
# A fleet of 10,000 reports decodes about half a million records. Per record class, once, the checks
# of :func:`_decode_record` are written out as one Python function: each field's value is taken and
# tested inline for the shape that passes (a str, an int in range and of the right sign, None, a list
# of records, ...), with no field path built; anything else goes to that field's own decoder above,
# which accepts what it accepts and raises the same error naming the same path. Fields are visited in
# the same order, so the first problem reported is the same one.

_ABSENT = object()


def _inline_check(tp: Any, name: str, refs: dict[str, Any]) -> str | None:
    """A Python expression on ``v`` that is True only where ``tp``'s decoder returns ``v`` unchanged."""
    if get_origin(tp) is Literal:
        refs[f"allowed_{name}"] = get_args(tp)
        return f"v in allowed_{name}"
    if tp is Any or tp is object:
        return "True"
    if tp is str:
        return "v.__class__ is str"
    if tp is bool:
        return "(v is True or v is False)"
    if tp in (int, float):
        sign = " and v >= 0" if name.endswith(NON_NEGATIVE_SUFFIXES) else ""
        return f"(v.__class__ is {tp.__name__} and -{MAX_MAGNITUDE} <= v <= {MAX_MAGNITUDE}{sign})"
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in get_args(tp) if a is not type(None)]
        if len(inner) != 1:
            return None
        check = _inline_check(inner[0], name, refs)
        nullable = type(None) in get_args(tp)
        if check is None:
            return "v is None" if nullable else None
        return f"(v is None or {check})" if nullable else check
    return None


def _compile_field(tp: Any, name: str, refs: dict[str, Any]) -> tuple[str, str]:
    """(a test on ``v``, the value to keep when it holds) for one field; the test False means "ask the
    field's own decoder"."""
    check = _inline_check(tp, name, refs)
    if check is not None:
        return check, "v"
    origin = get_origin(tp)
    nullable = ""
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in get_args(tp) if a is not type(None)]
        if len(inner) == 1 and type(None) in get_args(tp):
            nullable, tp, origin = "v is not None and ", inner[0], get_origin(inner[0])
    if is_dataclass(tp):
        refs[f"record_{name}"] = _decoder(cast(Any, tp))
        return f"{nullable}v.__class__ is dict", f"record_{name}(v, at(where, {name!r}), source, strict)"
    if origin is tuple and get_args(tp)[1:] == (Ellipsis,):
        item = get_args(tp)[0]
        if item is str:
            return f"{nullable}v.__class__ is list and all(x.__class__ is str for x in v)", "tuple(v)"
        if is_dataclass(item):
            refs[f"item_{name}"] = _decoder(cast(Any, item))
            return (
                f"{nullable}v.__class__ is list",
                f"tuple([item_{name}(x, f'{{at(where, \"{name}\")}}[{{i}}]', source, strict) "
                "for i, x in enumerate(v)])",
            )
    if origin is dict:
        item = get_args(tp)[1]
        if item is str:
            return (
                f"{nullable}v.__class__ is dict and all(k.__class__ is str and x.__class__ is str "
                "for k, x in v.items())",
                "dict(v)",
            )
        if is_dataclass(item):
            refs[f"item_{name}"] = _decoder(cast(Any, item))
            return (
                f"{nullable}v.__class__ is dict",
                f"{{str(k): item_{name}(x, f'{{at(where, \"{name}\")}}.{{k}}', source, strict) "
                "for k, x in v.items()}",
            )
    return "False", "v"


def _at(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


@cache
def _compiled(cls: Any) -> _Decoder:
    """The decoder of one record class, written out once (see above)."""
    plan, _known = _plan(cls)
    hints = typing.get_type_hints(cls)
    refs: dict[str, Any] = {
        "cls": cls, "ABSENT": _ABSENT, "at": _at, "reference": _record, "unknown": _unknown_fields,
        "InputError": InputError,
    }  # fmt: skip
    lines = [
        "def decode(value, where, source, strict):",
        "    if value.__class__ is not dict:",
        "        return reference(cls, value, where, source, strict)",
        "    if strict:",
        "        unknown(cls, value, where, source)",
        "    get = value.get",
        "    kwargs = {}",
    ]
    for name, field_decoder, required in plan:
        test, keep = _compile_field(hints[name], name, refs)
        refs[f"decode_{name}"] = field_decoder
        lines.append(f"    v = get({name!r}, ABSENT)")
        lines.append("    if v is ABSENT:")
        if required:
            missing = f"at(where, {name!r}) + ': required field missing'"
            lines.append(f"        raise InputError(source, {missing})")
        else:
            lines.append("        pass")
        lines.append(f"    elif {test}:")
        lines.append(f"        kwargs[{name!r}] = {keep}")
        lines.append("    else:")
        lines.append(f"        kwargs[{name!r}] = decode_{name}(v, at(where, {name!r}), source, strict)")
    lines.append("    return cls(**kwargs)")
    namespace = dict(refs)
    exec("\n".join(lines), namespace)  # noqa: S102 - our own field names, checked to be identifiers
    decoder: _Decoder = namespace["decode"]
    return decoder


def prepare(cls: type) -> None:
    """Write out the decoders of ``cls`` and of every record it holds, ahead of their use: on a worker
    at the GUI's start-up, so that the snapshot a user opens next decodes without writing them on the
    GUI thread (~9 ms for a Machine's)."""
    seen: set[Any] = set()

    def walk(tp: Any) -> None:
        if isinstance(tp, type) and is_dataclass(tp):
            if tp not in seen:
                seen.add(tp)
                _compiled(tp)
                for hint in typing.get_type_hints(tp).values():
                    walk(hint)
        else:
            for arg in get_args(tp):
                walk(arg)

    walk(cls)


def _expected_name(tp: Any) -> str:
    names = []
    for arg in get_args(tp):
        if arg is type(None):
            names.append("null")
        elif get_origin(arg) is Literal:
            names.append("one of " + ", ".join(repr(a) for a in get_args(arg)))
        else:
            names.append(_FRIENDLY.get(arg, getattr(arg, "__name__", str(arg))))
    return " or ".join(names)
