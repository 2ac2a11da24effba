"""Run a contract's PTX on the CPU emulator (symexec) and compare with the reference.

Host arrays follow harness.dtypes (bf16/fp8 held as float32 on the exact grid); they are encoded
to the device's bit layout before the launch and decoded after it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import ptx_parser
import tcgen05  # noqa: F401  (plugs the tensor-core unit into the machine)
from semantics.formats import BF16, E4M3, E5M2, decode, round_f64
from symexec import Launch, load_program, run_kernel
from symexec.launch import param_layout
from symexec.paged import PAGE, ZeroBytes, element_indices
from symexec.tensormap import ElementType, Interleave, L2Promotion, OobFill, Swizzle, TensorMap, TensorMapError

from . import dtypes as _dt
from .compile import CompiledPTX, DescPart, compile_contract
from .contract import Comparison, Contract, ContractError, TensorDesc
from .inputs import LazyTensor

_NARROW = {"bf16": (BF16, np.uint16), "fp8e4m3": (E4M3, np.uint8), "fp8e5m2": (E5M2, np.uint8)}


def to_device(arr: np.ndarray, dtype_name: str) -> np.ndarray:
    """Host storage -> the array whose bytes the kernel sees."""
    name = _dt.canonical(dtype_name)
    if name in _NARROW:
        fmt, store = _NARROW[name]
        bits = round_f64(np.asarray(arr, dtype=np.float64).reshape(-1), fmt, "rn",
                         satfinite=name == "fp8e4m3")
        return bits.astype(store).reshape(np.shape(arr))
    return np.ascontiguousarray(arr, dtype=_dt.dtype(name).storage)


@dataclass(frozen=True)
class DeviceBytes:
    """The device bytes of a lazy host tensor, page by page (a symexec.paged.BufferSource)."""

    tensor: LazyTensor

    @property
    def elem_bytes(self) -> int:
        return _dt.dtype(self.tensor.dtype).bits // 8

    @property
    def nbytes(self) -> int:
        return self.tensor.size * self.elem_bytes

    def fill(self, pages: np.ndarray) -> np.ndarray:
        es = self.elem_bytes
        elem = element_indices(pages)[:, ::es] // es
        inside = elem < self.tensor.size
        dev = to_device(self.tensor.values(np.where(inside, elem, 0).reshape(-1)), self.tensor.dtype)
        dev = np.where(inside.reshape(-1), dev, 0).astype(dev.dtype)
        return np.ascontiguousarray(dev).view(np.uint8).reshape(pages.size, PAGE)


def device_buffer(arr, dtype_name: str):
    """What a launch holds for one tensor: device bytes of a host array, or made on demand."""
    return DeviceBytes(arr) if isinstance(arr, LazyTensor) else to_device(arr, dtype_name)


def from_device(raw: np.ndarray, dtype_name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Bytes of a device buffer -> host storage of `dtype_name` with `shape`."""
    name = _dt.canonical(dtype_name)
    count = int(np.prod(shape))
    if name in _NARROW:
        fmt, store = _NARROW[name]
        bits = raw.view(store)[:count]
        return decode(bits, fmt).astype(np.float32).reshape(shape)
    return raw.view(_dt.dtype(name).storage)[:count].reshape(shape).copy()


@dataclass
class Emulation:
    contract: str
    target: str
    outputs: dict[str, np.ndarray]
    seconds: float
    steps: int
    comparisons: list[Comparison] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.comparisons)


#: The buffer holding Triton's global scratch (device-side tensor descriptors live there).
GLOBAL_SCRATCH = "__global_scratch"
_BUFFER_ALIGN = 256  # what symexec's global memory aligns every launch buffer to


def launch_for(contract: Contract, compiled: CompiledPTX, arrays: dict[str, np.ndarray],
               instance: str) -> Launch:
    """The emulator launch of one contract instance: a buffer per tensor, the contract's scalars,
    a TensorMap (and the shape/stride scalars) per tensor-descriptor argument, and Triton's hidden
    pointers: global scratch of ``global_scratch_size`` bytes per program when the kernel needs it
    (Triton's launcher allocates the same), the rest null."""
    r = contract.resolve(instance)
    buffers = {t.name: device_buffer(arrays[t.name], t.dtype) for t in contract.tensors}
    params, scratch = param_values(contract, compiled, instance)
    if scratch:
        buffers[GLOBAL_SCRATCH] = ZeroBytes(scratch)
    return Launch(r.grid, (compiled.threads_per_block, 1, 1), buffers, params,
                  dynamic_shared_bytes=compiled.shared, kernel=compiled.entry)


def kernel_launch(contract: Contract, compiled: CompiledPTX, kernel: Any, arrays: dict[str, np.ndarray],
                  instance: str) -> Launch:
    """:func:`launch_for` for ``kernel`` (a parsed PTX function that passed :func:`check_signature`
    against ``compiled``): its name, and Triton's trailing hidden parameters cut or padded with nulls
    to the kernel's own parameter count."""
    launch = launch_for(contract, compiled, arrays, instance)
    n = len(kernel.params or ())
    launch.params = (launch.params + [0] * n)[:n]
    launch.kernel = kernel.name
    return launch


def param_values(contract: Contract, compiled: CompiledPTX, instance: str) -> tuple[list[Any], int]:
    """The value of each PTX parameter of ``compiled`` at ``instance``: a tensor's name for its
    pointer (and a descriptor's base), a TensorMap over the tensor's name, the scalars;
    GLOBAL_SCRATCH for Triton's global scratch pointer and 0 for its other hidden pointers. Also
    the bytes of global scratch the launch needs (0: none)."""
    r = contract.resolve(instance)
    descs = [a for a in contract.args if isinstance(a, TensorDesc)]
    maps = dict(zip((d.name for d in descs), compiled.tensordesc))
    names = {t.name for t in contract.tensors}
    params: list[Any] = []
    hidden = scratch = 0
    for p in compiled.params:
        if p.arg is None:  # Triton's hidden pointers: global scratch first, then profile scratch
            scratch = _scratch_bytes(compiled, r.grid) if hidden == 0 else scratch
            params.append(GLOBAL_SCRATCH if hidden == 0 and scratch else 0)
            hidden += 1
        elif p.part is not None:
            d = next(a for a in descs if a.name == p.arg)
            params.append(_desc_part(contract, d, p.part, p.index, r.shapes[d.name], maps.get(d.name)))
        elif p.arg in names:
            params.append(p.arg)
        else:
            v = r.scalars[p.arg]
            params.append({"float": v} if isinstance(v, float) else int(v))
    return params, scratch


def _scratch_bytes(compiled: CompiledPTX, grid: tuple[int, int, int]) -> int:
    """Triton's global scratch: ``global_scratch_size`` bytes for each program (0 when none)."""
    size = compiled.global_scratch_size
    if size <= 0:
        return 0
    if compiled.global_scratch_align > _BUFFER_ALIGN:
        raise ContractError(compiled.contract, "kernel", f"global scratch aligned to {compiled.global_scratch_align} "
                                                         f"bytes; the emulator aligns buffers to {_BUFFER_ALIGN}")
    return size * grid[0] * grid[1] * grid[2]


def _row_strides(shape: tuple[int, ...]) -> list[int]:
    return [int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(len(shape))]


def _desc_part(contract: Contract, d: TensorDesc, part: DescPart, index: int, shape: tuple[int, ...],
               meta: dict | None) -> Any:
    """The value of one PTX parameter of descriptor argument ``d`` (harness.compile.DescPart)."""
    if part is DescPart.TENSOR_MAP:
        if meta is None:
            raise ContractError(contract.name, "args", f"descriptor '{d.name}': Triton gave no tensor-map metadata")
        return descriptor_map(contract.name, d, shape, meta)
    if part in (DescPart.SHAPE, DescPart.SHAPE64):
        return int(shape[index])
    if part in (DescPart.STRIDE, DescPart.STRIDE64):
        return _row_strides(shape)[index]
    if part is DescPart.BASE:
        return d.name
    if part is DescPart.PADDING_NAN:
        return int(d.padding == "nan")
    return 0  # ROUND_TF32: TensorDescriptor's round_f32_to_tf32 is off


def descriptor_map(contract: str, d: TensorDesc, shape: tuple[int, ...], meta: dict) -> TensorMap:
    """The CUtensorMap Triton's launcher builds for a TensorDescriptor over tensor ``d``
    (driver.py make_tensordesc_arg / fillTMADescriptorTiled): dimensions and strides innermost
    first, the box Triton chose (``block_size``, which may be narrower than the block: a wide
    block is copied in several boxes), its swizzle, element strides 1, no interleave, L2
    promotion 128B, NaN fill for ``padding="nan"``."""
    elem = _dt.dtype(d.dtype).bits // 8
    et = ElementType.from_ptx(int(meta["elem_type"]))
    if meta.get("fp4_padded") or meta.get("is_im2col"):
        raise ContractError(contract, "args", f"descriptor '{d.name}': padded fp4 / im2col descriptors are not "
                                              "modelled")
    if et is None or int(meta["elem_size"]) != elem or et.bytes != elem:
        raise ContractError(contract, "args", f"descriptor '{d.name}': Triton's tensor map has element type "
                                              f"{meta['elem_type']} of {meta['elem_size']} bytes; the tensor is "
                                              f"{d.dtype}")
    strides = _row_strides(shape)
    try:
        return TensorMap(et, tuple(reversed(shape)), tuple(s * elem for s in reversed(strides[:-1])),
                         tuple(int(b) for b in reversed(meta["block_size"])), (1,) * len(shape), Interleave.NONE,
                         Swizzle(int(meta["swizzle"])), L2Promotion.L2_128B,
                         OobFill.NAN_REQUEST_ZERO_FMA if d.padding == "nan" else OobFill.ZERO, d.name, 0)
    except TensorMapError as e:
        raise ContractError(contract, "args", f"descriptor '{d.name}': {e}") from None


#: Triton appends up to two hidden pointer parameters (global and profile scratch); a candidate
#: kernel may keep them or not.  They are passed as null.
MAX_HIDDEN_PARAMS = 2
_INT_KINDS = {"b", "s", "u"}


def _decl_type(param: Any) -> tuple[str, int] | None:
    """(kind letter, width in bits) of a ``.param`` declaration; arrays count as their bytes."""
    layout = param_layout(param)
    if layout is None or layout[0] == ".pred":
        return None
    return layout[0][1], layout[2] * 8


def _compatible(have: tuple[str, int], want: str) -> bool:
    """Same width; integers of any signedness; floats only where the contract passes a float,
    untyped ``.bN`` anywhere (its bytes are what the launch writes, PTX ISA 5.1.6)."""
    kind, width = have
    wkind, wwidth = want[0], int(want[1:])
    if width != wwidth:
        return False
    if kind == "b" or wkind == "b":
        return True
    return (kind in _INT_KINDS) == (wkind in _INT_KINDS)


_PER_DIMENSION = (DescPart.SHAPE, DescPart.STRIDE, DescPart.SHAPE64, DescPart.STRIDE64)


def _describe_param(p: Any) -> str:
    """``a (pointer, .u64)``, ``b tensor_map (.align 64 .b8[128])``, ``b shape[1] (.u32)``."""
    name = p.arg
    if p.part is not None:
        name += f" {p.part.value}" + (f"[{p.index}]" if p.part in _PER_DIMENSION else "")
    if p.part is DescPart.TENSOR_MAP:
        return f"{name} (.align 64 .b8[128])"
    return f"{name} ({'pointer, .u64' if p.is_pointer else '.' + p.ptx_type})"


def check_signature(contract: Contract, compiled: CompiledPTX, kernel: Any) -> None:
    """Raise ValueError unless ``kernel``'s parameters can carry ``contract``'s arguments: the
    contract's parameters in order (pointers as 64-bit integers, scalars of the same width and
    kind), then at most MAX_HIDDEN_PARAMS trailing 64-bit parameters for Triton's scratch pointers."""
    named = [p for p in compiled.params if p.arg is not None]
    params = list(kernel.params or ())

    def expected() -> str:
        return ", ".join(_describe_param(p) for p in named)

    if len(params) < len(named):
        raise ValueError(f"kernel {kernel.name} has {len(params)} parameters; contract {contract.name} passes "
                         f"{len(named)}: {expected()}")
    for i, (have, want) in enumerate(zip(params, named)):
        decl = _decl_type(have)
        if want.part is DescPart.TENSOR_MAP and decl == ("b", 1024) and (have.align or 0) < 64:
            raise ValueError(f"kernel {kernel.name}: parameter {i} ({have.name}) carries the tensor map of "
                             f"'{want.arg}' and must be `.param .align 64 .b8 {have.name}[128]`")
        if decl is None or not _compatible(decl, want.ptx_type):
            got = f".{decl[0]}{decl[1]}" if decl else "of no scalar type"
            what = "a pointer (.u64)" if want.is_pointer else f"a .{want.ptx_type} scalar"
            raise ValueError(f"kernel {kernel.name}: parameter {i} ({have.name}) is {got}, but contract "
                             f"{contract.name} passes argument '{want.arg}' there, {what}; the contract's "
                             f"parameters: {expected()}")
    extra = params[len(named):]
    if len(extra) > MAX_HIDDEN_PARAMS or any(_decl_type(p) not in (("u", 64), ("b", 64), ("s", 64)) for p in extra):
        names = ", ".join(p.name for p in extra)
        raise ValueError(f"kernel {kernel.name} has {len(extra)} parameter(s) after contract {contract.name}'s "
                         f"{len(named)} ({names}); only up to {MAX_HIDDEN_PARAMS} trailing 64-bit scratch "
                         f"pointers (passed as null) are allowed; the contract's parameters: {expected()}")


def emulate(contract: Contract, arch: str = "sm_90a", instance: str = "verify", *,
            arrays: dict[str, np.ndarray] | None = None, distribution: str = "normal", seed: int = 0,
            compare: bool = True) -> Emulation:
    compiled = compile_contract(contract, arch, instance)
    module = ptx_parser.parse(compiled.ptx, f"{contract.name}.{compiled.target}.ptx")
    prog = load_program(module, compiled.entry)
    if arrays is None:
        arrays = contract.make_inputs(instance, distribution, seed)
    launch = launch_for(contract, compiled, arrays, instance)
    t0 = time.perf_counter()
    glob, _, stats = run_kernel(prog, launch)
    dt = time.perf_counter() - t0
    r = contract.resolve(instance)
    outputs = {t.name: from_device(glob.by_name(t.name).data, t.dtype, r.shapes[t.name])
               for t in contract.tensors if t.is_output}
    result = Emulation(contract.name, compiled.target, outputs, dt, stats.steps)
    if compare:
        expected = contract.run_reference(arrays, instance)
        result.comparisons = contract.compare(outputs, expected, contract.abs_scale(arrays, instance))
    return result
