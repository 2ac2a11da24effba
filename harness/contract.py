"""Kernel contracts: the fixed interface of one Triton kernel (arguments, grid, instances, reference).

A :class:`Contract` names the kernel, its arguments in the order of the kernel's Python signature,
constexpr values, the launch grid as a function of named dimensions, the instances ("verify",
small; "bench", realistic), a float64 reference, tolerances and input domains.  It validates
itself when built (a :class:`ContractError` names the offending field), generates seeded inputs,
runs the reference, compares outputs, and (through :mod:`harness.compile`) derives the PTX
facts of the compiled kernel: entry name, parameter list, threads per block, shared memory.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from harness import dtypes as _dt
from harness import inputs as _inputs

Dims = Mapping[str, int]
DimValue = int | str | Callable[[Dims], Any]

ROLES = ("in", "out", "inout")
ARCHES = (80, 89, 90, 100, 120)
MAX_THREADS_PER_BLOCK = 1024
# Grid limits (CUDA: x < 2^31, y and z <= 65535).
GRID_LIMITS = (2**31 - 1, 65535, 65535)

#: Default (rtol, atol) per output dtype, against a float64 reference.
DEFAULT_TOLERANCE: dict[str, tuple[float, float]] = {
    "fp64": (1e-12, 1e-300),
    "fp32": (1e-5, 1e-6),
    "fp16": (2e-3, 1e-5),
    "bf16": (1.6e-2, 1e-5),
    "fp8e4m3": (1.25e-1, 1e-3),
    "fp8e5m2": (2.5e-1, 1e-3),
    "i8": (0.0, 0.0), "u8": (0.0, 0.0), "i32": (0.0, 0.0), "u32": (0.0, 0.0), "i64": (0.0, 0.0),
}


class ContractError(ValueError):
    """A contract is malformed, or was asked for something it cannot provide."""

    def __init__(self, contract: str, fieldname: str, message: str) -> None:
        self.contract = contract
        self.field = fieldname
        super().__init__(f"contract {contract!r}: field '{fieldname}': {message}")


def cdiv(a: int, b: int) -> int:
    """Ceiling division for non-negative ``a`` and positive ``b``."""
    return -(-a // b)


@dataclass(frozen=True)
class Tensor:
    """A pointer argument: element dtype, shape (dim names or ints), role."""

    name: str
    dtype: str
    shape: tuple[int | str, ...]
    role: str = "in"

    def __post_init__(self) -> None:
        if isinstance(self.shape, list):
            object.__setattr__(self, "shape", tuple(self.shape))

    @property
    def is_input(self) -> bool:
        return self.role in ("in", "inout")

    @property
    def is_output(self) -> bool:
        return self.role in ("out", "inout")


@dataclass(frozen=True)
class TensorDesc(Tensor):
    """A tensor passed as a host-side tensor descriptor: Triton's
    ``triton.tools.tensor_descriptor.TensorDescriptor`` of the whole (row-major, contiguous) tensor
    with block shape ``block`` (ints, constexpr or dim names, or callables of the dims). On targets
    with TMA the kernel receives a CUtensorMap plus the shape and strides; ``padding`` ("zero" or
    "nan") fills the out-of-bounds elements of loads. Its data is generated, given to the reference
    and compared like any tensor's."""

    block: tuple[int | str | Callable[[Dims], Any], ...] = ()
    padding: str = "zero"

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.block, list):
            object.__setattr__(self, "block", tuple(self.block))


@dataclass(frozen=True)
class Scalar:
    """A by-value argument; ``value`` is an int/float, a dim name, or a callable(dims)."""

    name: str
    dtype: str = "i32"
    value: DimValue = 0


@dataclass
class Resolved:
    """Everything about one instance of a contract, with concrete numbers."""

    instance: str
    dims: dict[str, int]
    constexprs: dict[str, Any]
    scalars: dict[str, int | float]
    shapes: dict[str, tuple[int, ...]]
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    #: block shape of each tensor-descriptor argument
    blocks: dict[str, tuple[int, ...]] = field(default_factory=dict)


@dataclass
class Comparison:
    """Outcome of comparing one output tensor against the reference."""

    name: str
    dtype: str
    max_abs: float
    max_rel: float
    rtol: float
    atol: float
    ok: bool
    bad: int
    detail: str = ""
    #: largest error / allowed error over finite elements (<= 1 means within tolerance).
    worst: float = 0.0
    #: index of the first element outside the tolerance (None when every element is within it)
    first_bad: tuple[int, ...] | None = None

    def __str__(self) -> str:
        verdict = "ok" if self.ok else "FAIL"
        extra = f" ({self.detail})" if self.detail else ""
        return (f"{self.name}[{self.dtype}]: {verdict} worst={self.worst:.3g}x tol "
                f"max_abs={self.max_abs:.3g} max_rel={self.max_rel:.3g} "
                f"rtol={self.rtol:g} atol={self.atol:g} bad={self.bad}{extra}")


def _is_constexpr_param(p: inspect.Parameter) -> bool:
    ann = p.annotation
    if ann is inspect.Parameter.empty:
        return False
    if isinstance(ann, str):
        return "constexpr" in ann
    return getattr(ann, "__name__", "") == "constexpr"


def kernel_parameters(kernel: Any) -> list[tuple[str, bool]]:
    """(name, is_constexpr) for each Python parameter of a @triton.jit function."""
    fn = getattr(kernel, "fn", kernel)
    return [(p.name, _is_constexpr_param(p)) for p in inspect.signature(fn).parameters.values()]


@dataclass
class Contract:
    """The launch interface of one Triton kernel; see the module docstring."""

    name: str
    description: str
    kernel: Any
    args: Sequence[Tensor | Scalar]
    grid: Callable[[Dims], Sequence[int]]
    reference: Callable[..., dict[str, np.ndarray]]
    instances: dict[str, dict[str, int]]
    constexprs: dict[str, Any] = field(default_factory=dict)
    num_warps: int = 4
    num_stages: int = 1
    min_arch: int = 80
    tolerance: dict[str, tuple[float, float]] = field(default_factory=dict)
    input_domain: dict[str, Any] = field(default_factory=dict)
    #: cap on |x| for the "large" distribution: one number, or per input name.
    large_limit: float | dict[str, float] | None = None
    #: distributions to test (default: all floating ones, or "uniform" for integer-only inputs).
    distributions: tuple[str, ...] | None = None
    #: bound errors by the reference applied to |inputs| too (sums/products with cancellation).
    scale_by_abs_reference: bool = False
    #: inputs given unchanged (not |x|) to that reference: those entering only through functions
    #: that are positive anyway, e.g. log-decays under exp (|log-decay| would invert the decay).
    abs_reference_keeps: tuple[str, ...] = ()
    #: extra Triton compile options (e.g. {"maxnreg": 128}).
    options: dict[str, Any] = field(default_factory=dict)
    #: two runs on the same inputs give bitwise equal outputs (False for ops whose result depends on
    #: the order of atomics); the evaluation harness compares two runs when True.
    deterministic: bool = True
    #: floating-point operations of one launch as a function of the dims (0: count only bytes); the
    #: evaluation harness rejects a time below bytes / peak bandwidth and flops / peak rate.
    flops: Callable[[Dims], float] | None = None

    def __post_init__(self) -> None:
        self.args = list(self.args)
        self._validate()

    # ------------------------------------------------------------------ validation
    def _err(self, fieldname: str, message: str) -> ContractError:
        return ContractError(self.name, fieldname, message)

    def _validate(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise self._err("name", f"{self.name!r} is not an identifier")
        if not callable(getattr(self.kernel, "fn", None)) and not callable(self.kernel):
            raise self._err("kernel", "not a @triton.jit function")
        try:
            params = kernel_parameters(self.kernel)
        except (TypeError, ValueError) as e:
            raise self._err("kernel", f"cannot read its signature: {e}") from None
        runtime = [n for n, c in params if not c]
        const = [n for n, c in params if c]
        names = [a.name for a in self.args]
        if len(set(names)) != len(names):
            raise self._err("args", f"duplicate argument names in {names}")
        for n in runtime:
            if n not in names:
                raise self._err("args", f"missing argument '{n}' of kernel {self.kernel_name}")
        for n in names:
            if n not in runtime:
                what = "a constexpr" if n in const else "not a parameter"
                raise self._err("args", f"'{n}' is {what} of kernel {self.kernel_name}")
        if names != runtime:
            raise self._err("args", f"order {names} differs from the kernel signature {runtime}")
        for n in const:
            if n not in self.constexprs:
                raise self._err("constexprs", f"missing constexpr '{n}'")
        for n in self.constexprs:
            if n not in const:
                raise self._err("constexprs", f"'{n}' is not a constexpr parameter of {self.kernel_name}")
        for a in self.args:
            self._validate_arg(a)
        if not isinstance(self.num_warps, int) or self.num_warps < 1 or self.num_warps & (self.num_warps - 1):
            raise self._err("num_warps", f"{self.num_warps!r} is not a power of two >= 1")
        if 32 * self.num_warps > MAX_THREADS_PER_BLOCK:
            raise self._err("num_warps", f"{32 * self.num_warps} threads exceed {MAX_THREADS_PER_BLOCK} per block")
        if not isinstance(self.num_stages, int) or self.num_stages < 1:
            raise self._err("num_stages", f"{self.num_stages!r} is not a positive int")
        if self.min_arch not in ARCHES:
            raise self._err("min_arch", f"{self.min_arch!r} is not one of {ARCHES}")
        for k, v in self.tolerance.items():
            if not _dt.is_known(k):
                raise self._err("tolerance", f"unknown dtype {k!r}")
            if not (isinstance(v, tuple) and len(v) == 2 and all(isinstance(t, (int, float)) and t >= 0 for t in v)):
                raise self._err("tolerance", f"{k}: expected (rtol, atol) non-negative, got {v!r}")
        inputs = {a.name for a in self.args if isinstance(a, Tensor) and a.is_input}
        for k, v in self.input_domain.items():
            if k not in inputs:
                raise self._err("input_domain", f"'{k}' is not an input tensor")
            msg = _inputs.check_domain(v)
            if msg:
                raise self._err("input_domain", f"{k}: {msg}")
        for k in self.abs_reference_keeps:
            if k not in inputs:
                raise self._err("abs_reference_keeps", f"'{k}' is not an input tensor")
            if not self.scale_by_abs_reference:
                raise self._err("abs_reference_keeps", "only meaningful with scale_by_abs_reference=True")
        if self.distributions is not None:
            known = _inputs.FLOAT_DISTRIBUTIONS + _inputs.INT_DISTRIBUTIONS
            for d in self.distributions:
                if d not in known:
                    raise self._err("distributions", f"unknown distribution {d!r}; known: {known}")
        if not callable(self.reference):
            raise self._err("reference", "not callable")
        if not callable(self.grid):
            raise self._err("grid", "not callable")
        for required in ("verify", "bench"):
            if required not in self.instances:
                raise self._err("instances", f"missing the '{required}' instance")
        resolved = {inst: self.resolve(inst) for inst in self.instances}
        verify, bench = resolved["verify"].constexprs, resolved["bench"].constexprs
        for k in self.constexprs:
            if verify[k] != bench[k]:
                raise self._err("constexprs", f"'{k}' is {verify[k]!r} at the verify instance but {bench[k]!r} "
                                "at bench; only problem sizes may differ, so that the verified PTX is the timed one")

    def _validate_arg(self, a: Tensor | Scalar) -> None:
        if isinstance(a, Tensor):
            if not _dt.is_known(a.dtype) or _dt.canonical(a.dtype) not in _dt.TENSOR_DTYPES:
                raise self._err("args", f"tensor '{a.name}': unknown dtype {a.dtype!r}; known: {_dt.TENSOR_DTYPES}")
            if a.role not in ROLES:
                raise self._err("args", f"tensor '{a.name}': bad role {a.role!r}; roles: {ROLES}")
            if not isinstance(a.shape, tuple) or not a.shape:
                raise self._err("args", f"tensor '{a.name}': shape must be a non-empty tuple")
            for d in a.shape:
                if not isinstance(d, (int, str)) or (isinstance(d, int) and d <= 0):
                    raise self._err("args", f"tensor '{a.name}': bad dim {d!r}")
            if isinstance(a, TensorDesc):
                if not isinstance(a.block, tuple) or len(a.block) != len(a.shape):
                    raise self._err("args", f"descriptor '{a.name}': block {a.block!r} must have one entry per "
                                            f"dimension of shape {a.shape}")
                if a.padding not in ("zero", "nan"):
                    raise self._err("args", f"descriptor '{a.name}': padding {a.padding!r} is not 'zero' or 'nan'")
                if a.padding == "nan" and not _dt.dtype(a.dtype).is_float:
                    raise self._err("args", f"descriptor '{a.name}': NaN padding needs a floating-point tensor")
        elif isinstance(a, Scalar):
            if a.dtype not in _dt.SCALAR_DTYPES:
                raise self._err("args", f"scalar '{a.name}': dtype {a.dtype!r} not one of {_dt.SCALAR_DTYPES}")
        else:
            raise self._err("args", f"{a!r} is neither a Tensor nor a Scalar")

    # ------------------------------------------------------------------ instances
    @property
    def kernel_name(self) -> str:
        return getattr(getattr(self.kernel, "fn", self.kernel), "__name__", "?")

    @property
    def threads_per_block(self) -> int:
        return 32 * self.num_warps

    @property
    def tensors(self) -> list[Tensor]:
        return [a for a in self.args if isinstance(a, Tensor)]

    @property
    def scalars(self) -> list[Scalar]:
        return [a for a in self.args if isinstance(a, Scalar)]

    def _value(self, v: DimValue, dims: Dims, fieldname: str, what: str) -> Any:
        try:
            if callable(v):
                return v(dims)
            if isinstance(v, str):
                return dims[v]
            return v
        except KeyError as e:
            raise self._err(fieldname, f"{what}: unknown dim {e.args[0]!r}") from None
        except Exception as e:  # a user callable failed
            raise self._err(fieldname, f"{what}: {type(e).__name__}: {e}") from None

    def resolve(self, instance: str = "verify") -> Resolved:
        """Concrete dims, constexprs, scalars, shapes and grid of ``instance``."""
        if instance not in self.instances:
            raise self._err("instances", f"unknown instance {instance!r}; known: {sorted(self.instances)}")
        dims = dict(self.instances[instance])
        for k, v in dims.items():
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise self._err("instances", f"{instance}: dim {k}={v!r} must be a positive int")
        consts = {k: self._value(v, dims, "constexprs", k) for k, v in self.constexprs.items()}
        scalars: dict[str, int | float] = {}
        for s in self.scalars:
            val = self._value(s.value, dims, "args", f"scalar '{s.name}'")
            if s.dtype == "fp32":
                if not isinstance(val, (int, float)):
                    raise self._err("args", f"scalar '{s.name}': {val!r} is not a number")
                scalars[s.name] = float(val)
                continue
            if not isinstance(val, (int, np.integer)) or isinstance(val, bool):
                raise self._err("args", f"scalar '{s.name}': {val!r} is not an int")
            dt = _dt.dtype(s.dtype)
            if not dt.min_value <= int(val) <= dt.max_value:
                raise self._err("args", f"scalar '{s.name}': {val} does not fit {s.dtype}")
            scalars[s.name] = int(val)
        shapes: dict[str, tuple[int, ...]] = {}
        for t in self.tensors:
            shape = tuple(self._value(d, dims, "args", f"tensor '{t.name}' shape") for d in t.shape)
            if any(not isinstance(d, int) or d <= 0 for d in shape):
                raise self._err("args", f"tensor '{t.name}': shape {shape} in {instance} is not positive")
            shapes[t.name] = shape
        blocks = {t.name: self._block(t, dims, consts, shapes[t.name], instance)
                  for t in self.tensors if isinstance(t, TensorDesc)}
        raw = self._value(self.grid, dims, "grid", instance)
        try:
            g = tuple(int(x) for x in raw)
        except TypeError:
            raise self._err("grid", f"{instance}: {raw!r} is not a sequence of ints") from None
        if not 1 <= len(g) <= 3:
            raise self._err("grid", f"{instance}: {g} must have 1 to 3 dimensions")
        g = g + (1,) * (3 - len(g))
        for axis, (n, lim) in enumerate(zip(g, GRID_LIMITS)):
            if n <= 0 or n > lim:
                raise self._err("grid", f"{instance}: grid {g} axis {'xyz'[axis]}={n} outside 1..{lim}")
        return Resolved(instance, dims, consts, scalars, shapes, g, (self.threads_per_block, 1, 1), blocks)

    def _block(self, t: "TensorDesc", dims: Dims, consts: Mapping[str, Any], shape: tuple[int, ...],
               instance: str) -> tuple[int, ...]:
        """The block shape of descriptor ``t``, checked as TensorDescriptor checks it (powers of two;
        every row stride a multiple of 16 bytes)."""
        what = f"descriptor '{t.name}' block"
        block = tuple(consts[b] if isinstance(b, str) and b in consts else self._value(b, dims, "args", what)
                      for b in t.block)
        for b in block:
            if not isinstance(b, (int, np.integer)) or isinstance(b, bool) or b <= 0 or b & (b - 1):
                raise self._err("args", f"{what} {block} in {instance}: every entry must be a power of two")
        elem = _dt.dtype(t.dtype).bits // 8
        for i in range(len(shape) - 1):
            stride = int(np.prod(shape[i + 1:], dtype=np.int64)) * elem
            if stride % 16:
                raise self._err("args", f"descriptor '{t.name}' in {instance}: shape {shape} has a {stride}-byte "
                                        f"stride in dimension {i}; a tensor descriptor needs multiples of 16")
        return tuple(int(b) for b in block)

    # ------------------------------------------------------------------ inputs / reference
    def distributions_for(self) -> tuple[str, ...]:
        if self.distributions is not None:
            return tuple(self.distributions)
        if any(_dt.dtype(t.dtype).is_float for t in self.tensors if t.is_input):
            return _inputs.FLOAT_DISTRIBUTIONS
        return _inputs.INT_DISTRIBUTIONS

    def _large_limit(self, name: str) -> float | None:
        if isinstance(self.large_limit, dict):
            return self.large_limit.get(name)
        return self.large_limit

    def make_inputs(self, instance: str = "verify", distribution: str = "normal",
                    seed: int = 0, lazy: bool = False) -> dict[str, np.ndarray]:
        """Host arrays for every tensor: generated inputs/inouts, sentinel-filled outputs. lazy:
        harness.inputs.LazyTensor objects instead, with the same values, made only where read
        (what the checker uses: its cost is then what a run touches, not the tensors' size)."""
        r = self.resolve(instance)
        out: dict[str, np.ndarray] = {}
        for t in self.tensors:
            shape = r.shapes[t.name]
            if t.is_input:
                tensor = _inputs.lazy_input(t.name, t.dtype, shape, distribution, seed,
                                            self.input_domain.get(t.name), self._large_limit(t.name))
            else:
                tensor = _inputs.lazy_sentinel(t.dtype, shape)
            out[t.name] = tensor if lazy else tensor.materialize()
        return out

    def run_reference(self, arrays: Mapping[str, np.ndarray], instance: str = "verify") -> dict[str, np.ndarray]:
        """Call the reference with input tensors and scalars (plus any dims/constexprs its
        signature asks for by name); returns float64 arrays for every output tensor."""
        r = self.resolve(instance)
        kwargs: dict[str, Any] = {t.name: arrays[t.name] for t in self.tensors if t.is_input}
        kwargs.update(r.scalars)
        params = inspect.signature(self.reference).parameters
        for pname in params:
            if pname not in kwargs:
                if pname in r.constexprs:
                    kwargs[pname] = r.constexprs[pname]
                elif pname in r.dims:
                    kwargs[pname] = r.dims[pname]
        if not any(p.kind == p.VAR_KEYWORD for p in params.values()):
            kwargs = {k: v for k, v in kwargs.items() if k in params}
        result = self.reference(**kwargs)
        outs = {}
        for t in self.tensors:
            if t.is_output:
                if t.name not in result:
                    raise self._err("reference", f"result lacks output '{t.name}'")
                val = np.asarray(result[t.name], dtype=np.float64)
                if val.shape != r.shapes[t.name]:
                    raise self._err("reference", f"'{t.name}' has shape {val.shape}, expected {r.shapes[t.name]}")
                outs[t.name] = val
        return outs

    def abs_scale(self, arrays: Mapping[str, np.ndarray], instance: str = "verify") -> dict[str, np.ndarray] | None:
        """Reference applied to |inputs| when ``scale_by_abs_reference`` is set (else None)."""
        if not self.scale_by_abs_reference:
            return None
        absed = {t.name: (np.abs(arrays[t.name]) if _dt.dtype(t.dtype).is_float
                          and t.name not in self.abs_reference_keeps else arrays[t.name])
                 for t in self.tensors if t.is_input}
        return {k: np.abs(v) for k, v in self.run_reference(absed, instance).items()}

    # ------------------------------------------------------------------ comparison
    def tolerance_for(self, dtype_name: str) -> tuple[float, float]:
        name = _dt.canonical(dtype_name)
        for k, v in self.tolerance.items():
            if _dt.canonical(k) == name:
                return v
        return DEFAULT_TOLERANCE[name]

    def compare(self, outputs: Mapping[str, np.ndarray], expected: Mapping[str, np.ndarray],
                scale: Mapping[str, np.ndarray] | None = None) -> list[Comparison]:
        """Compare every output tensor; see :func:`compare_arrays`."""
        res = []
        for t in self.tensors:
            if t.is_output:
                rtol, atol = self.tolerance_for(t.dtype)
                res.append(compare_arrays(t.name, t.dtype, outputs[t.name], expected[t.name], rtol, atol,
                                          None if scale is None else scale.get(t.name)))
        return res

    # ------------------------------------------------------------------ Triton facts
    def triton_signature(self, instance: str = "verify", specialize_ones: bool = True
                         ) -> tuple[dict[str, str], dict[str, Any], dict[tuple[int, ...], list]]:
        """(signature, constexprs, attrs) as a real launch would pass them to Triton: pointers are
        16-byte aligned, ints divisible by 16 get ``tt.divisibility`` 16, and an int equal to 1
        is specialised into a constant (Triton's default for non-``do_not_specialize`` ints)."""
        r = self.resolve(instance)
        sig: dict[str, str] = {}
        consts: dict[str, Any] = dict(r.constexprs)
        attrs: dict[tuple[int, ...], list] = {}
        for i, (pname, is_const) in enumerate(kernel_parameters(self.kernel)):
            if is_const:
                sig[pname] = "constexpr"
                continue
            a = next(x for x in self.args if x.name == pname)
            if isinstance(a, TensorDesc):
                blk = ", ".join(str(b) for b in r.blocks[pname])
                sig[pname] = f"tensordesc<{_dt.dtype(a.dtype).triton}[{blk}]>"
                continue
            if isinstance(a, Tensor):
                sig[pname] = "*" + _dt.dtype(a.dtype).triton
                attrs[(i,)] = [["tt.divisibility", 16]]
                continue
            v = r.scalars[pname]
            if a.dtype != "fp32" and specialize_ones and v == 1:
                sig[pname] = "constexpr"
                consts[pname] = 1
                continue
            sig[pname] = a.dtype
            if a.dtype != "fp32" and v % 16 == 0:
                attrs[(i,)] = [["tt.divisibility", 16]]
        return sig, consts, attrs

    def kernel_args(self, tensors: Mapping[str, Any], instance: str = "verify") -> list[Any]:
        """The runtime arguments of a Triton launch, in order: the tensors (torch) of ``tensors``,
        a ``TensorDescriptor`` over the tensor for each descriptor argument, the scalars."""
        r = self.resolve(instance)
        args: list[Any] = []
        for a in self.args:
            if isinstance(a, TensorDesc):
                from triton.tools.tensor_descriptor import TensorDescriptor
                args.append(TensorDescriptor.from_tensor(tensors[a.name], list(r.blocks[a.name]), padding=a.padding))
            elif isinstance(a, Tensor):
                args.append(tensors[a.name])
            else:
                args.append(r.scalars[a.name])
        return args

    def compile(self, arch: str | int = "sm_90a", instance: str = "verify", **kwargs: Any) -> Any:
        """Compile ahead of time; returns :class:`harness.compile.CompiledPTX`."""
        from harness.compile import compile_contract  # local: compile imports this module
        return compile_contract(self, arch=arch, instance=instance, **kwargs)


def compare_arrays(name: str, dtype_name: str, actual: np.ndarray, expected: np.ndarray,
                   rtol: float, atol: float, scale: np.ndarray | None = None) -> Comparison:
    """Compare ``actual`` with a float64 ``expected``.

    NaN positions must match exactly.  Infinities must match in position and sign, where the
    expected infinities are those of the reference *rounded to the output type* (IEEE overflow on
    conversion).  Finite elements pass when ``|a - e| <= atol + rtol * max(|e|, scale)``;
    ``scale`` is the reference on |inputs| for kernels whose sums may cancel.
    """
    a = np.asarray(actual).astype(np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if a.shape != e.shape:
        return Comparison(name, dtype_name, np.inf, np.inf, rtol, atol, False, a.size,
                          f"shape {a.shape} != {e.shape}")
    dt = _dt.dtype(dtype_name)
    nan_a, nan_e = np.isnan(a), np.isnan(e)
    bad = nan_a != nan_e
    inf_a, inf_e = np.isinf(a), np.isinf(e) | (np.abs(e) >= _dt.overflow_threshold(dt.name))
    bad |= (inf_a | inf_e) & ~(inf_a & inf_e & (np.sign(a) == np.sign(e)))
    fin = ~(nan_a | nan_e | inf_a | inf_e)
    err = np.zeros_like(e)
    err[fin] = np.abs(a[fin] - e[fin])
    mag = np.abs(e)
    if scale is not None:
        mag = np.maximum(mag, np.asarray(scale, dtype=np.float64))
    bound = atol + rtol * mag
    bad |= fin & (err > bound)
    ratio = np.zeros_like(e)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio[fin] = np.where(bound[fin] > 0, err[fin] / bound[fin], np.where(err[fin] > 0, np.inf, 0.0))
    rel = np.zeros_like(e)
    nz = fin & (e != 0)
    rel[nz] = err[nz] / np.abs(e[nz])
    n_bad = int(bad.sum())
    detail = ""
    first = None
    if n_bad:
        idx = np.unravel_index(int(np.argmax(bad)), bad.shape) if bad.ndim else ()
        first = tuple(int(i) for i in idx)
        detail = f"first bad at {first}: got {float(a[idx])!r}, want {float(e[idx])!r}"
    max_abs = float(err.max()) if err.size else 0.0
    max_rel = float(rel.max()) if rel.size else 0.0
    worst = float(ratio.max()) if ratio.size else 0.0
    return Comparison(name, dtype_name, max_abs, max_rel, rtol, atol, n_bad == 0, n_bad, detail, worst, first)
