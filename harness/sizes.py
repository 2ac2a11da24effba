"""A contract's launches for every problem size: the symexec.check.sizes.SizeDomain of a compiled
contract, for `volta check --sizes symbolic`.

Every dim of the instance (N, M, K, ...) becomes a size variable in [1, 2^31 - 1]. The domain
keeps what the PTX was compiled under, so it proves the kernel a real launch would run:
- an integer argument Triton saw divisible by 16 was specialised with `tt.divisibility = 16`
  (harness.contract.Contract.triton_signature): the PTX may rely on it, so it stays a multiple of
  16; one equal to 1 was compiled in as a constant, so it stays 1;
- pointers are 16-byte aligned (the emulator aligns every buffer to 256 bytes);
- every tensor has fewer than 2^31 elements (the int32 indexing Triton uses by default), stated so
  that no 64-bit product wraps: each dim and each leading partial count is in [1, 2^31 - 1] too
  (`count_facts`).
The grid, every scalar and descriptor shape/stride parameter and every buffer's size are the
contract's own functions of the dims, evaluated on Z3 terms (`SymInt`), so `cdiv(N, BLOCK)` is the
grid it is in a real launch. A dim that one of them cannot take symbolically (a function that needs
a concrete int) is held at the checked value, and the verdict says so.
"""

from __future__ import annotations

from typing import Any, Callable

from symexec.check.sizes import Env, SizeDomain, SizeVar, SymInt

from . import dtypes as _dt
from .candidate import LaunchHeader
from .compile import CompiledPTX, DescPart
from .contract import Contract, Scalar, Tensor, TensorDesc
from .emulate import GLOBAL_SCRATCH, launch_for

SIZE_MAX = 2**31 - 1
WITNESS_INSTANCE = "_sizes"


def _fn(v) -> Callable[[Env], Any]:
    """A contract value (an int, a dim name or a callable of the dims) as a function of the sizes."""
    if callable(v):
        return lambda env: v(dict(env))
    if isinstance(v, str):
        return lambda env: env[v]
    return lambda env: v


def _prod(xs) -> Any:
    out: Any = 1
    for x in xs:
        out = out * x
    return out


def _not_symbolic() -> tuple[type[Exception], ...]:
    """What a contract function raises when it needs concrete ints (z3: a symbolic comparison taken as a bool,
    in `min` say; an int method such as bit_length called on a symbolic size)."""
    import z3

    return (TypeError, ValueError, ArithmeticError, AttributeError, z3.Z3Exception)


def _symbolic(f: Callable[[Env], Any], env: Env) -> bool:
    try:
        f(env)
        return True
    except _not_symbolic():
        return False


def size_domain(c: Contract, compiled: CompiledPTX, instance: str, ptx_params: list[str],
                header: LaunchHeader | None = None) -> SizeDomain:
    """The domain of `compiled` (the contract's PTX, whose parameters are named `ptx_params`) around
    the launch of `instance`; `header`: a candidate's launch shape (harness.candidate), whose grid
    replaces the contract's."""
    import z3

    r = c.resolve(instance)
    probe = {k: SymInt(z3.BitVec(f"probe_{k}", 64)) for k in r.dims}
    fixed: dict[str, int] = {}
    facts: list[Callable[[Env], Any]] = []
    notes: list[str] = []

    def env_of(env: Env) -> dict:
        # held dims as plain ints: a function that needs concrete ints (mamba2's `bit_length`) then runs
        return {**env, **fixed}

    # what must be taken symbolically: the grid, scalar values, tensor shapes
    grid_f = _fn(c.grid) if header is None else (lambda env: header.evaluate(env)[0])
    funcs: list[tuple[str, Callable]] = [("grid", grid_f)]
    for a in c.args:
        if isinstance(a, Scalar) and a.dtype != "fp32":
            funcs.append((f"scalar {a.name}", _fn(a.value)))
        if isinstance(a, Tensor):
            for d in a.shape:
                funcs.append((f"shape of {a.name}", _fn(d)))
    for what, f in funcs:
        if not _symbolic(f, probe):
            fixed.update(r.dims)
            notes.append(f"symbolic sizes: the {what} is not a function the prover can take symbolically: every size "
                         "is held at the checked launch's")
            break
    if not fixed:
        # a dim that neither the grid nor an integer argument nor a descriptor carries is invisible to the
        # PTX at run time: the kernel was compiled for its value (an attention head's D, a constexpr), so
        # "every size" ranges over it only at that value (a q of BH x N x 1 halves read by a D = 128 build is
        # out of bounds, but no launch of that PTX has it)
        seen: set[str] = set()
        runtime = [f for what, f in funcs if not what.startswith("shape of ")]  # the grid and integer scalars
        runtime += [_fn(x) for a in c.args if isinstance(a, TensorDesc) for x in a.shape]
        for f in runtime:
            try:
                _dims_read(f(probe), seen)
            except _not_symbolic():  # it may read any dim
                seen.update(r.dims)
        for k in r.dims:
            if k not in seen:
                fixed[k] = r.dims[k]
                notes.append(f"symbolic sizes: {k} is held at the checked launch's {r.dims[k]}: no grid dimension, "
                             "integer argument or descriptor carries it, so the PTX was compiled for that value")
    params: dict[str, Callable[[Env], Any]] = {}
    descs = {a.name: a for a in c.args if isinstance(a, TensorDesc)}
    scalars = {a.name: a for a in c.args if isinstance(a, Scalar)}
    for pname, p in zip(ptx_params, compiled.params):
        if p.arg in scalars and scalars[p.arg].dtype != "fp32":
            f = _fn(scalars[p.arg].value)
            params[pname] = (lambda f: lambda env: f(env_of(env)))(f)
            v = r.scalars[p.arg]
            if v == 1:
                facts.append((lambda f: lambda env: (SymInt.of(f(env_of(env))) == 1))(f))
            elif v % 16 == 0:
                facts.append((lambda f: lambda env: (SymInt.of(f(env_of(env))) % 16 == 0))(f))
        elif p.part in (DescPart.SHAPE, DescPart.SHAPE64, DescPart.STRIDE, DescPart.STRIDE64):
            d = descs[p.arg]
            shape_f = [_fn(x) for x in d.shape]
            if p.part in (DescPart.SHAPE, DescPart.SHAPE64):
                params[pname] = (lambda sf, k: lambda env: sf[k](env_of(env)))(shape_f, p.index)
            else:
                params[pname] = (lambda sf, k: lambda env: _prod(f(env_of(env)) for f in sf[k + 1:]))(shape_f, p.index)

    def grid(env: Env) -> tuple:
        g = tuple(grid_f(env_of(env)))
        return g + (1,) * (3 - len(g))

    buffer_bytes: dict[str, Callable[[Env], Any]] = {}
    for t in c.tensors:
        es = _dt.dtype(t.dtype).bits // 8
        shape_f = [_fn(x) for x in t.shape]
        count = (lambda sf: lambda env: _prod(f(env_of(env)) for f in sf))(shape_f)
        buffer_bytes[t.name] = (lambda cnt, es: lambda env: cnt(env) * es)(count, es)
        facts += count_facts(shape_f, env_of)
    if compiled.global_scratch_size > 0:
        per = compiled.global_scratch_size
        buffer_bytes[GLOBAL_SCRATCH] = lambda env: _prod(grid(env)) * per
    variables = []
    for k, v in r.dims.items():
        m = _multiple(c, r, k)
        variables.append(SizeVar(k, v, v) if k in fixed else SizeVar(k, m, SIZE_MAX - SIZE_MAX % m, m))

    def launch_at(point: dict[str, int]):
        dims = {k: int(point.get(k, v)) for k, v in r.dims.items()}
        c.instances[WITNESS_INSTANCE] = dims
        launch = launch_for(c, compiled, c.make_inputs(WITNESS_INSTANCE, "normal", 0, lazy=True), WITNESS_INSTANCE)
        launch.params = (launch.params + [0] * len(ptx_params))[:len(ptx_params)]
        if header is not None:
            shape = header.shape(dims)
            launch.grid, launch.block, launch.dynamic_shared_bytes = shape.grid, shape.block, shape.dynamic_shared_bytes
        return launch

    assumptions = ["symbolic sizes: every tensor has 1 to 2^31 - 1 elements (Triton's int32 indexing; so has each "
                   "leading part of its shape); integer "
                   "arguments keep the specialisation the PTX was compiled for (a multiple of 16 stays one, 1 "
                   "stays 1: tt.divisibility); buffers 256-byte aligned"] + notes
    return SizeDomain(variables, dict(r.dims), params, grid, buffer_bytes, launch_at, facts, assumptions)


def count_facts(shape_f: list[Callable[[Env], Any]], env_of: Callable[[Env], Env] = lambda env: env
                ) -> list[Callable[[Env], Any]]:
    """A tensor's element count in [1, SIZE_MAX], as 64-bit facts that hold exactly where the integer
    ones do: every dim of the shape and every leading partial count (A, A*M, A*M*K for an A x M x K
    tensor) in [1, SIZE_MAX]. That is what "1 to 2^31 - 1 elements" means for a real launch, whose dims
    are all >= 1; stated on the count alone, A*M*K <= 2^31 - 1 holds also where the 64-bit product wraps
    past 2^64 (three sizes < 2^31 multiply to up to 2^93), and then bounds none of its factors. Each
    partial count < 2^31 times a dim < 2^31 fits 63 bits, so every product here is its integer value,
    and symexec/check/bv2int.py, bounding A*M, takes A*M*K without a reduction modulo 2^64."""
    out: list[Callable[[Env], Any]] = []

    def bounded(part: Callable[[Env], Any]) -> None:
        out.append(lambda env: SymInt.of(part(env)) <= SIZE_MAX)
        out.append(lambda env: SymInt.of(part(env)) >= 1)

    for i, f in enumerate(shape_f):
        bounded(lambda env, f=f: f(env_of(env)))
        if i:  # built as the count is (_prod), so it is the count's own sub-term
            bounded(lambda env, i=i: _prod(g(env_of(env)) for g in shape_f[:i + 1]))
    return out


def _dims_read(value, out: set[str]) -> None:
    """Add to `out` the dims (probe_NAME constants) a value of the probe sizes depends on."""
    import z3

    todo = [v.t if isinstance(v, SymInt) else v for v in (value if isinstance(value, (tuple, list)) else (value,))]
    todo = [t for t in todo if isinstance(t, z3.ExprRef)]
    done: set[int] = set()
    while todo:
        e = todo.pop()
        if e.get_id() in done:
            continue
        done.add(e.get_id())
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.add(e.decl().name().removeprefix("probe_"))
        else:
            todo.extend(e.children())


def _multiple(c: Contract, r, dim: str) -> int:
    """16 when a scalar argument equal to the dim was compiled as divisible by 16 (the fact is
    also among the domain's constraints; this is for the description)."""
    for a in c.args:
        if isinstance(a, Scalar) and a.value == dim and a.dtype != "fp32" and r.dims[dim] % 16 == 0:
            return 16
    return 1


__all__ = ["size_domain", "count_facts", "WITNESS_INSTANCE", "SIZE_MAX"]
