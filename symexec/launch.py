"""A launch: grid and block shape, buffers in global memory, and the kernel's parameter values.

The JSON launch spec (for PTX that has no Triton contract; `volta run --launch spec.json`):

    {
      "kernel": "vector_add",                 # optional when the module has one kernel
      "grid": [4, 1, 1], "block": [128, 1, 1],
      "dynamic_shared_bytes": 0,              # optional
      "buffers": {                            # global memory allocations
        "x": {"dtype": "float32", "shape": [512], "init": "random", "seed": 0},
        "y": {"dtype": "float32", "shape": [512], "init": "zeros"},
        "w": {"dtype": "int32", "data": [1, 2, 3]}
      },
      "params": [                             # in .param order; a string names a buffer
        "x", "y", 512, {"float": 0.5}, {"value": 0, "comment": "Triton scratch pointer"},
        {"buffer": "x", "offset": 256},       # a pointer into a buffer, a byte offset from its start
        {"tensor_map": {                      # a CUtensorMap, for a `.param .align 64 .b8 p[128]`
          "buffer": "x", "offset": 0,         # the global address: a buffer and a byte offset (16-aligned)
          "dtype": "float32",                 # uint8 uint16 uint32 int32 uint64 int64 float16 float32
                                              # float64 bfloat16 (float32_ftz, tfloat32{_ftz}: refused)
          "global_dims": [512],               # innermost dimension first, as cuTensorMapEncodeTiled
          "global_strides": [],               # bytes, rank-1 entries (dimensions 1..), multiples of 16
          "box_dims": [64],                   # 1 to 256; box_dims[0] x element bytes a multiple of 16
          "element_strides": [1],             # optional, 1 to 8 (default all 1)
          "interleave": "none",               # optional: none, 16B, 32B
          "swizzle": "none",                  # optional: none, 32B, 64B, 128B, 128B_atom_32B,
                                              # 128B_atom_32B_flip_8B, 128B_atom_64B
          "l2_promotion": "none",             # optional: none, 64B, 128B, 256B (a hint)
          "oob_fill": "zero"                  # optional: zero, nan_request_zero_fma
        }}
      ]
    }

Buffers are filled with `init` in zeros/ones/random (seeded normal for floats, uniform for
integers) or with explicit `data`. Pointer parameters receive the buffer's device address. A
`tensor_map` is validated as cuTensorMapEncodeTiled validates its arguments (symexec.tensormap);
its 128 parameter bytes are an opaque tag, and the `Launch` keeps the `TensorMap` by parameter
position (`Launch.tensor_maps`) for the tensor copies that use it (symexec.tma).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .paged import BufferSource
from .tensormap import TENSOR_MAP_ALIGN, TENSOR_MAP_BYTES, TensorMap, TensorMapError, param_ident, tag_bytes

_DTYPES = {"float16": np.float16, "float32": np.float32, "float64": np.float64, "int8": np.int8,
           "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
           "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "bfloat16": np.uint16,
           "float8_e4m3": np.uint8, "float8_e5m2": np.uint8}


class LaunchError(ValueError):
    """A launch that cannot be run: wrong parameter count, unknown buffer, bad shape."""


@dataclass
class Launch:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    buffers: dict[str, np.ndarray | BufferSource] = field(default_factory=dict)  # sources: bytes made on touch
    params: list = field(default_factory=list)  # ints, floats ({"float": x}), buffer names, TensorMaps
    dynamic_shared_bytes: int = 0
    kernel: str | None = None
    cluster: tuple[int, int, int] = (1, 1, 1)

    def __post_init__(self) -> None:
        self.grid = _dim3(self.grid, "grid")
        self.block = _dim3(self.block, "block")
        if self.threads_per_block > 1024:
            raise LaunchError(f"block {self.block} has {self.threads_per_block} threads; at most 1024")
        for name, arr in self.buffers.items():
            if not isinstance(arr, (np.ndarray, BufferSource)):
                raise LaunchError(f"buffer {name!r} must be a numpy array or a symexec.paged.BufferSource")
        if not 0 <= self.dynamic_shared_bytes <= MAX_DYNAMIC_SHARED:
            raise LaunchError(f"dynamic_shared_bytes = {self.dynamic_shared_bytes}: must be 0 to "
                              f"{MAX_DYNAMIC_SHARED} (227 KiB, the most a CTA can have)")
        self.params = [_tensor_map(i, v) for i, v in enumerate(self.params)]
        for i, tm in self.tensor_maps.items():
            _check_map_buffer(i, tm, self.buffers)

    @property
    def tensor_maps(self) -> dict[int, TensorMap]:
        """The tensor maps passed by value, by parameter position."""
        return {i: v for i, v in enumerate(self.params) if isinstance(v, TensorMap)}

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def num_ctas(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]


#: CUDA's launch limits (compute capability 8.0 and later): grid x < 2^31, y and z <= 65535;
#: block x, y <= 1024, z <= 64; dynamic shared memory per block at most 227 KiB (sm_90, sm_100).
DIM_LIMITS = {"grid": (2**31 - 1, 65535, 65535), "block": (1024, 1024, 64)}
MAX_DYNAMIC_SHARED = 227 * 1024
#: Buffers the emulator holds in host memory: beyond this a spec is refused, not attempted.
MAX_BUFFER_BYTES = 1 << 34


def check_launch_bounds(fn, launch: "Launch") -> None:
    """Refuse a launch that the kernel's performance directives forbid, as CUDA does (PTX 11.4):
    `.reqntid nx, ny, nz` requires each block dimension to equal its value (11.4.3), `.maxntid`
    bounds the block's thread count by the product of its values (11.4.2); either way the launch
    fails on a GPU, so the verdict would be about a kernel that never runs."""
    block = launch.block
    req = fn.directive(".reqntid")
    if req is not None:
        want = tuple(req.values) + (1,) * (3 - len(req.values))
        if tuple(block) != want:
            raise LaunchError(f"block {tuple(block)} contradicts the kernel's .reqntid {', '.join(map(str, req.values))}: "
                              f"CUDA refuses the launch (each block dimension must equal it, PTX 11.4.3)")
    mx = fn.directive(".maxntid")
    if mx is not None:
        limit = 1
        for v in mx.values:
            limit *= v
        if launch.threads_per_block > limit:
            raise LaunchError(f"block {tuple(block)} has {launch.threads_per_block} threads, more than the kernel's "
                              f".maxntid {', '.join(map(str, mx.values))} ({limit} threads): CUDA refuses the launch "
                              "(PTX 11.4.2)")


def _dim3(v, what: str) -> tuple[int, int, int]:
    if isinstance(v, int) and not isinstance(v, bool):
        v = (v,)
    if not isinstance(v, (tuple, list)) or not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool)
                                                   for x in v):
        raise LaunchError(f"{what} must be 1 to 3 positive integers, got {v!r}")
    v = tuple(int(x) for x in v)
    if not 1 <= len(v) <= 3 or any(x < 1 for x in v):
        raise LaunchError(f"{what} must be 1 to 3 positive integers, got {v}")
    for axis, (x, limit) in enumerate(zip(v, DIM_LIMITS[what])):
        if x > limit:
            raise LaunchError(f"{what} {'xyz'[axis]} = {x} exceeds CUDA's limit of {limit}")
    return v + (1,) * (3 - len(v))  # type: ignore[return-value]


def _tensor_map(i: int, v):
    """A `{"tensor_map": {...}}` parameter as a validated TensorMap; other values unchanged."""
    if isinstance(v, dict) and "tensor_map" in v:
        extra = set(v) - {"tensor_map", "comment"}
        if extra:
            raise LaunchError(f"params[{i}]: unknown field(s) {sorted(extra)} beside 'tensor_map'")
        try:
            return TensorMap.from_spec(v["tensor_map"])
        except TensorMapError as e:
            raise LaunchError(f"params[{i}].{e}") from None
    return v


def _check_map_buffer(i: int, tm: TensorMap, buffers: dict[str, np.ndarray]) -> None:
    if tm.buffer is None:
        raise LaunchError(f"params[{i}].tensor_map.buffer: a launch's tensor map must point into a buffer")
    if tm.buffer not in buffers:
        raise LaunchError(f"params[{i}].tensor_map.buffer: no buffer named {tm.buffer!r} "
                          f"(buffers: {', '.join(buffers) or 'none'})")
    have = buffers[tm.buffer].nbytes
    if tm.offset + tm.extent_bytes() > have:
        raise LaunchError(f"params[{i}].tensor_map.global_dims: the tensor spans {tm.extent_bytes()} bytes from "
                          f"offset {tm.offset}, but buffer {tm.buffer!r} has {have}")


def param_layout(p) -> tuple[str, int, int] | None:
    """(type such as ".u32", element bytes, total bytes) of a ``.param`` declaration; None when
    it names no scalar type."""
    from semantics.constexpr import evaluate
    from symexec.program import type_width  # local: keeps launch importable alone

    ty = next((a for a in p.attrs if a.lstrip(".") in _PARAM_TYPES), None)
    if ty is None:
        return None
    width = max(8, type_width(ty)) // 8
    size = width
    for d in p.dims:
        size *= int(evaluate(d)) if d is not None else 0
    return ty, width, size


def pack_params(param_decls, values: list, addresses: dict[str, int]) -> tuple[bytes, dict[str, int]]:
    """Lay out kernel parameters as the .param space: each at its alignment (PTX 5.1.6)."""
    if len(values) != len(param_decls):
        names = ", ".join(p.name for p in param_decls)
        raise LaunchError(f"the kernel has {len(param_decls)} parameters ({names}); the launch gives {len(values)}")
    buf = bytearray()
    offsets: dict[str, int] = {}
    for pos, (p, v) in enumerate(zip(param_decls, values)):
        layout = param_layout(p)
        if layout is None:
            raise LaunchError(f"parameter {p.name}: no scalar type in {p.attrs}")
        ty, width, size = layout
        # `.ptr .align N` describes the pointee; the parameter itself is naturally aligned
        align = width if ".ptr" in p.attrs else (p.align or width)
        while len(buf) % align:
            buf.append(0)
        offsets[p.name] = len(buf)
        if isinstance(v, TensorMap):
            if size != TENSOR_MAP_BYTES or ty != ".b8" or align < TENSOR_MAP_ALIGN:
                raise LaunchError(f"parameter {p.name}: a tensor map (CUtensorMap) is passed in a `.param .align 64 "
                                  f".b8 {p.name}[128]` parameter, not {' '.join(p.attrs)} of {size} bytes")
            if v.buffer not in addresses:
                raise LaunchError(f"parameter {p.name}: tensor map into unknown buffer {v.buffer!r}")
            buf += tag_bytes(param_ident(pos))
            continue
        buf += _encode(p.name, ty, size, v, addresses)
    return bytes(buf), offsets


_PARAM_TYPES = {f"{k}{w}" for k in "bsu" for w in (8, 16, 32, 64)} | {"f16", "f32", "f64", "pred"}


_FLOAT_FORMAT = {"f16": "<e", "f32": "<f", "f64": "<d"}


def _encode(name: str, ty: str, size: int, v, addresses: dict[str, int]) -> bytes:
    """The bytes of one parameter value (the launch spec's forms, already checked against the
    schema; a Launch built in Python is checked here as well: nothing is truncated)."""
    kind = ty.lstrip(".")
    if isinstance(v, dict) and "buffer" in v:  # a pointer into a buffer: its address plus a byte offset
        if v["buffer"] not in addresses:
            raise LaunchError(f"parameter {name}: no buffer named {v['buffer']!r} (buffers: {', '.join(addresses)})")
        if size != 8:
            raise LaunchError(f"parameter {name} is {ty}; a buffer address needs a 64-bit parameter")
        v = addresses[v["buffer"]] + int(v.get("offset", 0))
    if isinstance(v, dict):
        if "bytes" in v:
            raw = bytes(v["bytes"])
            if len(raw) > size:
                raise LaunchError(f"parameter {name}: {len(raw)} bytes given for a {size}-byte parameter")
            return raw.ljust(size, b"\0")
        v = v["float"] if "float" in v else v.get("value", 0)
    if isinstance(v, str):
        if v not in addresses:
            raise LaunchError(f"parameter {name}: no buffer named {v!r} (buffers: {', '.join(addresses)})")
        if size != 8:
            raise LaunchError(f"parameter {name} is {ty}; a buffer address needs a 64-bit parameter")
        v = addresses[v]
    if kind in _FLOAT_FORMAT and size == struct.calcsize(_FLOAT_FORMAT[kind]):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise LaunchError(f"parameter {name} is {ty}; got {v!r}")
        return struct.pack(_FLOAT_FORMAT[kind], float(v))
    if isinstance(v, (float, np.floating)):
        raise LaunchError(f"parameter {name} is {ty}; got a float")
    iv = int(v)
    bits = 8 * size
    lo = 0 if kind.startswith("u") else -(1 << (bits - 1))
    hi = (1 << (bits - 1)) - 1 if kind.startswith("s") else (1 << bits) - 1
    if not lo <= iv <= hi:
        raise LaunchError(f"parameter {name}: {iv} is outside the range of {ty} ({lo} to {hi})")
    return (iv & ((1 << bits) - 1)).to_bytes(size, "little")


def read_launch_spec(path: str | Path):
    """The decoded JSON of a launch spec file (not yet validated); errors name the file and line."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise LaunchError(f"{path}: cannot read the launch spec: {e.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise LaunchError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None


def load_launch_spec(path: str | Path, decls=None) -> Launch:
    """Read a JSON launch spec (format in the module docstring). Errors name the field; with the
    kernel's parameter declarations `decls`, each parameter is checked against its type."""
    return spec_to_launch(read_launch_spec(path), str(path), decls)


def spec_to_launch(spec, where: str, decls=None) -> Launch:
    """A launch from an already-decoded spec object, validated against the declared schema
    (symexec.launch_schema; with `decls`, the kernel's `.param` declarations type the parameters);
    errors name `where` and the JSON path of the field."""
    from .launch_schema import errors

    if not isinstance(spec, dict):
        raise LaunchError(f"{where}: the launch spec must be a JSON object, got {type(spec).__name__}")
    found = errors(spec, decls)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise LaunchError(f"{where}: {found[0]}{more}")
    buffers = {name: make_buffer(name, b) for name, b in spec.get("buffers", {}).items()}
    grid, block = spec["grid"], spec["block"]
    return Launch(tuple(grid) if isinstance(grid, list) else grid, tuple(block) if isinstance(block, list) else block,
                  buffers, spec["params"], spec.get("dynamic_shared_bytes", 0), spec.get("kernel"))


def make_buffer(name: str, b: dict) -> np.ndarray:
    """A buffer of a validated spec entry (launch_schema: known fields, types and ranges)."""
    dt = _DTYPES[b.get("dtype", "float32")]
    if "data" in b:
        try:
            return np.asarray(b["data"], dtype=dt)
        except (ValueError, OverflowError) as e:  # ragged lists, values the dtype cannot hold
            raise LaunchError(f"buffers.{name}.data: {e}") from None
    shape = tuple(b["shape"] if isinstance(b["shape"], list) else [b["shape"]])
    nbytes = int(np.prod(shape, dtype=object)) * np.dtype(dt).itemsize
    if nbytes > MAX_BUFFER_BYTES:
        raise LaunchError(f"buffers.{name}: {nbytes} bytes; the emulator holds at most {MAX_BUFFER_BYTES} per buffer")
    init = b.get("init", "zeros")  # zeros, ones or random (the schema's enum)
    if init == "zeros":
        return np.zeros(shape, dtype=dt)
    if init == "ones":
        return np.ones(shape, dtype=dt)
    rng = np.random.default_rng(int(b.get("seed", 0)))
    if np.issubdtype(dt, np.floating):
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape, dtype=dt)
