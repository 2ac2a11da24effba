"""The launch spec's schema: one declared JSON Schema (2020-12), checked with `jsonschema`.

Every field at every depth has a type and, where CUDA or the kernel sets one, a range: the grid and
block within CUDA's launch limits, dynamic shared memory within 227 KiB, buffers with known fields
only, and each parameter by the kernel's own `.param` declaration (PTX 5.1.6 kernel parameters):
an integer parameter takes an integer within the range of its type (a `.u32` takes 0 to 2^32 - 1;
a `.b32` any 32-bit pattern, signed or not), a 64-bit one may also name a buffer (its address is
passed) or point into one (`{"buffer": name, "offset": bytes}`), a float parameter a number or
`{"float": x}`, a 128-byte `.b8` array a tensor map, and any parameter raw `{"bytes": [...]}` of at
most its size. `null`, `true` for an integer, a buffer name for a 32-bit parameter or an unknown
key anywhere are errors.

Messages name the JSON path of the field (`params[3]`, `buffers.x.shape[0]`) and what it takes;
the texts come from the schema's own annotations (`x-expect`: what a field takes, `x-limit`: whose
limit a maximum is, `x-name`: what an enumerated field names) so that schema and message stay one.
Rules across fields (threads per block, buffer bytes, a tensor map's fit in its buffer, the
driver's rules on a tensor map) are checked where they are built (launch.py, tensormap.py).
"""

from __future__ import annotations

from typing import Any

import jsonschema

from .launch import _DTYPES, DIM_LIMITS, MAX_DYNAMIC_SHARED, param_layout
from .tensormap import _SPEC_NAMES, TENSOR_MAP_ALIGN, TENSOR_MAP_BYTES, ElementType, Interleave, L2Promotion, \
    OobFill, Swizzle

_U64 = 2**64 - 1


def _dim3(limits: tuple[int, int, int]) -> dict:
    axes = [{"type": "integer", "minimum": 1, "maximum": lim, "x-expect": "a positive integer",
             "x-limit": "CUDA's limit"} for lim in limits]
    return {"x-expect": "1 to 3 positive integers", "anyOf": [
        {"type": "integer", "minimum": 1, "maximum": limits[0], "x-limit": "CUDA's limit"},
        {"type": "array", "minItems": 1, "maxItems": 3, "prefixItems": axes, "items": False}]}


def _numbers(depth: int = 4) -> dict:
    """A number or (nested) lists of numbers: a buffer's explicit `data`."""
    inner: dict = {"type": "number", "x-expect": "a number"}
    for _ in range(depth):
        inner = {"anyOf": [{"type": "number"}, {"type": "array", "items": inner}],
                 "x-expect": "a number or a list of numbers"}
    return {"type": "array", "items": inner, "x-expect": "a list of numbers"}


_BUFFER = {
    "type": "object", "x-expect": "an object (dtype, shape or data, init, seed)",
    "properties": {
        "dtype": {"enum": list(_DTYPES), "x-name": "dtype"},
        "shape": {"x-expect": "a non-negative integer or a list of them", "anyOf": [
            {"type": "integer", "minimum": 0},
            {"type": "array", "items": {"type": "integer", "minimum": 0, "x-expect": "a non-negative integer"}}]},
        "data": _numbers(),
        "init": {"enum": ["zeros", "ones", "random"], "x-name": "init"},
        "seed": {"type": "integer", "minimum": 0, "maximum": _U64, "x-expect": "a non-negative integer"},
        "comment": {"type": "string"},
        # equivalence (volta check --reference): what the buffer is to the kernel, and the
        # (rtol, atol) an output may differ by
        "role": {"enum": ["in", "out", "inout"], "x-name": "role"},
        "tolerance": {"type": "array", "items": {"type": "number", "minimum": 0, "x-expect": "a non-negative number"},
                      "minItems": 2, "maxItems": 2, "x-expect": "[rtol, atol]"},
        # equivalence: an integer input's witness-search draws taken from lo..hi-1 (labels of C columns:
        # [0, C)); what is proved is over every input
        "draw_range": {"type": "array", "items": {"type": "integer", "x-expect": "an integer"},
                       "minItems": 2, "maxItems": 2, "x-expect": "[lo, hi]"},
    },
    "additionalProperties": False,
    "anyOf": [{"required": ["data"]}, {"required": ["shape"]}],
    "x-requires": "give 'data' or 'shape'",
}

_INTS = {"type": "array", "items": {"type": "integer", "x-expect": "an integer"}, "x-expect": "a list of integers"}

_TENSOR_MAP = {
    "type": "object", "x-expect": "an object describing a CUtensorMap",
    "properties": {
        "buffer": {"type": "string", "x-expect": "a buffer name"},
        "offset": {"type": "integer", "minimum": 0, "x-expect": "a non-negative byte offset"},
        "dtype": {"enum": [t.value for t in ElementType], "x-name": "element type"},
        "global_dims": _INTS, "global_strides": _INTS, "box_dims": _INTS, "element_strides": _INTS,
        "interleave": {"enum": list(_SPEC_NAMES[Interleave]),
                       "x-name": "interleave"},
        "swizzle": {"enum": list(_SPEC_NAMES[Swizzle]),
                    "x-name": "swizzle"},
        "l2_promotion": {"enum": list(_SPEC_NAMES[L2Promotion]),
                         "x-name": "l2_promotion"},
        "oob_fill": {"enum": list(_SPEC_NAMES[OobFill]),
                     "x-name": "oob_fill"},
        "mode": {"type": "string"},
        "comment": {"type": "string"},
    },
    "required": ["buffer", "dtype", "global_dims", "box_dims"],
    "additionalProperties": False,
}

SPEC_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Volta launch spec",
    "type": "object", "x-expect": "a JSON object (grid, block, buffers, params)",
    "properties": {
        "kernel": {"type": "string", "x-expect": "a kernel name"},
        "comment": {"type": "string"},
        "grid": _dim3(DIM_LIMITS["grid"]),
        "block": _dim3(DIM_LIMITS["block"]),
        "dynamic_shared_bytes": {"type": "integer", "minimum": 0, "maximum": MAX_DYNAMIC_SHARED,
                                 "x-expect": "a number of bytes", "x-limit": "CUDA's limit"},
        "buffers": {"type": "object", "additionalProperties": _BUFFER,
                    "x-expect": "an object of name -> buffer"},
        "params": {"type": "array", "x-expect": "a list of the kernel's parameter values"},
    },
    "required": ["grid", "block", "params"],
    "additionalProperties": False,
}


# ---------------------------------------------------------------- parameters, from the kernel's declarations
def _int_range(kind: str, bits: int) -> tuple[int, int]:
    """Values an integer parameter of `.{kind}{bits}` takes: unsigned, signed, or (.b) either."""
    if kind == "u":
        return 0, 2**bits - 1
    if kind == "s":
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return -(2 ** (bits - 1)), 2**bits - 1


def param_schema(decl, buffers: list[str]) -> dict:
    """The schema of one parameter value, from its `.param` declaration."""
    layout = param_layout(decl)
    name = decl.name
    if layout is None:
        return {"not": {}, "x-expect": f"nothing: parameter {name} has no type Volta can fill"}
    ty, width, size = layout
    kind, bits = ty[1], int(ty[2:]) if ty[2:].isdigit() else 0
    raw = {"type": "object", "properties": {
        "bytes": {"type": "array", "maxItems": size,
                  "items": {"type": "integer", "minimum": 0, "maximum": 255, "x-expect": "a byte (0 to 255)"}},
        "comment": {"type": "string"}}, "required": ["bytes"], "additionalProperties": False,
        "x-expect": f"{{\"bytes\": [...]}} of at most {size} bytes"}
    options: list[dict] = []
    what: str
    if size == TENSOR_MAP_BYTES and ty == ".b8" and (decl.align or 1) >= TENSOR_MAP_ALIGN:
        what = f"a 128-byte parameter ({name}) takes a tensor map or bytes"
        options.append({"type": "object", "properties": {"tensor_map": _TENSOR_MAP, "comment": {"type": "string"}},
                        "required": ["tensor_map"], "additionalProperties": False})
    elif size != width:  # an array of scalars: raw bytes only
        what = f"a {size}-byte array parameter ({name}) takes {{\"bytes\": [...]}}"
    elif ty == ".pred":
        what = f"a .pred parameter ({name}) takes true, false, 0 or 1"
        options.append({"anyOf": [{"type": "boolean"}, {"enum": [0, 1]}]})
    elif kind == "f":
        what = f"a {ty} parameter ({name}) takes a number or {{\"float\": x}}"
        number = {"type": "number"}
        options += [number, {"type": "object", "properties": {"float": number, "comment": {"type": "string"}},
                             "required": ["float"], "additionalProperties": False}]
    else:
        lo, hi = _int_range(kind, bits)
        integer = {"type": "integer", "minimum": lo, "maximum": hi, "x-range": f"{ty} ({lo} to {hi})",
                   "x-expect": "an integer"}
        value = [integer]
        if bits == 64:
            what = f"a {ty} parameter ({name}) takes an integer, a buffer name or {{\"buffer\": name, \"offset\": n}}"
            named = {"type": "string", "enum": buffers, "x-buffers": buffers, "x-expect": "a buffer name"}
            value.append(named)
            options.append({"type": "object", "properties": {  # a pointer into a buffer at a byte offset
                "buffer": named, "offset": {"type": "integer", "minimum": 0, "x-expect": "a non-negative byte offset"},
                "comment": {"type": "string"}}, "required": ["buffer"], "additionalProperties": False})
        else:
            what = f"a {ty} parameter ({name}) takes an integer"
        options += value
        options.append({"type": "object", "properties": {"value": {"anyOf": value}, "comment": {"type": "string"}},
                        "required": ["value"], "additionalProperties": False})
    options.append(raw)
    return {"anyOf": options, "x-expect": what}


def params_schema(decls, buffers: list[str]) -> dict:
    names = ", ".join(p.name for p in decls)
    return {"type": "array", "prefixItems": [param_schema(p, buffers) for p in decls], "items": False,
            "minItems": len(decls), "maxItems": len(decls),
            "x-count": f"the kernel has {len(decls)} parameters ({names})",
            "x-expect": "a list of the kernel's parameter values"}


def spec_schema(decls=None, buffers: list[str] | None = None) -> dict:
    """The whole schema; with the kernel's parameter declarations, each parameter's too."""
    if decls is None:
        return SPEC_SCHEMA
    schema = dict(SPEC_SCHEMA, properties=dict(SPEC_SCHEMA["properties"]))
    schema["properties"]["params"] = params_schema(decls, list(buffers or []))
    return schema


# ---------------------------------------------------------------- messages
def json_path(parts) -> str:
    """`params[3]`, `buffers.x.shape[0]`; the whole spec is ``(top level)``."""
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def _short(v: Any) -> str:
    text = repr(v) if not isinstance(v, (dict, list)) else __import__("json").dumps(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _leaf_errors(e: jsonschema.ValidationError):
    """The errors inside an anyOf/oneOf, deepest first (what the value failed in each option)."""
    for sub in e.context or ():
        yield from _leaf_errors(sub)
        yield sub


def describe(e: jsonschema.ValidationError) -> str:
    """One error as `path: what is wrong`, from the schema's annotations."""
    path, inst, schema = json_path(e.absolute_path), e.instance, e.schema
    v = e.validator
    if v == "additionalProperties":
        extra = sorted(set(inst) - set(schema.get("properties", {})))
        known = ", ".join(schema.get("properties", {}))
        return f"{path}: unknown field{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))} (known: {known})"
    if v == "required":
        if schema.get("x-requires"):
            return f"{path}: {schema['x-requires']}"
        return f"{path}: missing field {e.message.split(' ')[0]}"
    if v == "anyOf" and schema.get("x-requires") and isinstance(inst, dict):
        return f"{path}: {schema['x-requires']}"
    if v in ("minItems", "maxItems") and schema.get("x-count"):
        return f"{path}: {schema['x-count']}; the launch gives {len(inst)}"
    if v == "items" and schema.get("x-count"):
        return f"{path}: {schema['x-count']}; the launch gives {len(inst)}"
    if v == "enum" and "x-buffers" in schema:
        return f"{path}: no buffer named {_short(inst)} (buffers: {', '.join(schema['x-buffers']) or 'none'})"
    if v == "enum" and schema.get("x-name"):
        return f"{path}: unknown {schema['x-name']} {_short(inst)} (known: {', '.join(map(str, schema['enum']))})"
    if v == "maximum" and schema.get("x-limit"):
        return f"{path}: {inst} exceeds {schema['x-limit']} of {schema['maximum']}"
    if v == "anyOf":
        leaves = list(_leaf_errors(e))
        for sub in leaves:  # a value of the right type out of its range: name the range, at the value's path
            where, value = json_path(sub.absolute_path), sub.instance
            if sub.validator in ("minimum", "maximum") and sub.schema.get("x-range"):
                return f"{where}: {value} is outside the range of {sub.schema['x-range']}"
            if sub.validator == "maximum" and sub.schema.get("x-limit"):
                return f"{where}: {value} exceeds {sub.schema['x-limit']} of {sub.schema['maximum']}"
        for sub in leaves:
            if sub.validator == "enum" and "x-buffers" in sub.schema and isinstance(inst, str):
                names = ", ".join(sub.schema["x-buffers"]) or "none"
                return f"{path}: no buffer named {inst!r} (buffers: {names})"
        # a list or object of the right shape failed inside: say where
        deep = [sub for sub in leaves if len(sub.absolute_path) > len(e.absolute_path) and sub.validator != "anyOf"]
        if isinstance(inst, (dict, list)) and deep:
            return describe(max(deep, key=lambda sub: len(sub.absolute_path)))
    expect = schema.get("x-expect")
    if expect:  # "a .u32 parameter (p) takes an integer" reads as it is; other annotations follow "expected"
        return f"{path}: {expect if ' takes ' in expect else 'expected ' + expect}, got {_short(inst)}"
    return f"{path}: {e.message}"


_VALIDATOR = jsonschema.Draft202012Validator


def errors(spec: Any, decls=None) -> list[str]:
    """Every schema error of `spec` (the kernel's `decls` type its parameters), shallowest first."""
    buffers = list(spec.get("buffers", {})) if isinstance(spec, dict) and isinstance(spec.get("buffers"), dict) \
        else []
    validator = _VALIDATOR(spec_schema(decls, buffers))
    # the spec's own fields first: a parameter naming a buffer that failed to validate is a consequence
    found = sorted(validator.iter_errors(spec), key=lambda e: (list(e.absolute_path)[:1] == ["params"],
                                                                len(e.absolute_path), json_path(e.absolute_path)))
    return [describe(e) for e in found]


_VALIDATOR.check_schema(SPEC_SCHEMA)

__all__ = ["SPEC_SCHEMA", "spec_schema", "params_schema", "errors", "describe", "json_path"]
