"""Hand-written candidate kernels for a suite contract: their launch shape and their launch.

A candidate presents the contract's interface (the parameters of Triton's PTX for the contract,
optionally without Triton's trailing scratch pointers) but may need another grid and block than
Triton's build: one row per warp, four rows per CTA, a split over K. It says so in one header
line among the first 40 lines of its PTX:

    // volta-launch: grid=(cdiv(M, 4), 1, 1) block=(128, 1, 1)
    // volta-launch: grid=(cdiv(M, 64), cdiv(N, 64), 4) block=(128, 1, 1) shared=0

``grid`` and ``block`` are 1 to 3 expressions (missing axes are 1), ``shared`` the dynamic shared
memory in bytes (default 0: candidates declare their shared memory statically). An expression
is built from the contract's dims (the names of its instances: ``M``, ``N``, ``K``...), integer
literals, ``+ - * //``, unary minus, parentheses and the functions ``cdiv(a, b)``, ``min(a, ...)``
and ``max(a, ...)``. It is read with :mod:`ast` and evaluated by walking the tree: nothing else
(no attribute, no other name, no other call) is accepted, and nothing is ever ``eval``-ed.

Without the header the candidate runs with the grid and block of Triton's build for the contract
(and its dynamic shared memory). ``volta run/check --contract`` use :func:`contract_launch`.
"""
from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import ptx_parser
from symexec.launch import DIM_LIMITS, MAX_DYNAMIC_SHARED, Launch

from .compile import CompiledPTX, compile_contract
from .contract import Contract

#: How many leading lines of a PTX file may carry the header.
HEADER_LINES = 40
_HEADER = re.compile(r"^\s*//\s*volta-launch\s*:(.*)$")
_KEY = re.compile(r"\b(grid|block|shared)\s*=")
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv}


class LaunchHeaderError(ValueError):
    """A `// volta-launch:` header that cannot be read or evaluated (names its file and line)."""


def cdiv(a: Any, b: Any) -> Any:
    """Ceiling division; written with ``//`` only, so it also takes symbolic sizes."""
    return -((-a) // b)


def _ints(name: str, xs: tuple[Any, ...]) -> tuple[int, ...]:
    if not all(isinstance(x, int) for x in xs):
        raise TypeError(f"{name}() of symbolic sizes")  # harness.sizes then holds the sizes fixed
    return xs


def _min(*xs: Any) -> Any:
    return min(_ints("min", xs))


def _max(*xs: Any) -> Any:
    return max(_ints("max", xs))


_FUNCTIONS: dict[str, tuple[Callable[..., Any], int | None]] = {"cdiv": (cdiv, 2), "min": (_min, None),
                                                                "max": (_max, None)}


@dataclass(frozen=True)
class LaunchShape:
    """A concrete launch shape: 3-d grid and block, dynamic shared bytes."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    dynamic_shared_bytes: int = 0


@dataclass(frozen=True)
class LaunchHeader:
    """The parsed `// volta-launch:` line of one PTX file."""

    grid: tuple[ast.expr, ...]
    block: tuple[ast.expr, ...]
    shared: ast.expr | None
    where: str  # "file:line"
    text: str  # the header line as written

    def _error(self, message: str) -> LaunchHeaderError:
        return LaunchHeaderError(f"{self.where}: volta-launch: {message}")

    def _eval(self, node: ast.expr, env: Mapping[str, Any]) -> Any:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in env:
                raise self._error(f"unknown name '{node.id}'; the contract's dims are {', '.join(sorted(env))}")
            return env[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            a, b = self._eval(node.left, env), self._eval(node.right, env)
            if isinstance(node.op, ast.FloorDiv) and isinstance(b, int) and b == 0:
                raise self._error(f"division by zero in '{ast.unparse(node)}'")
            return _BINARY[type(node.op)](a, b)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self._eval(node.operand, env)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS \
                and not node.keywords:
            fn, arity = _FUNCTIONS[node.func.id]
            if (arity is not None and len(node.args) != arity) or not node.args:
                raise self._error(f"{node.func.id}() takes {arity or 'at least one'} argument(s): "
                                  f"'{ast.unparse(node)}'")
            args = [self._eval(a, env) for a in node.args]
            if node.func.id == "cdiv" and isinstance(args[1], int) and args[1] <= 0:
                raise self._error(f"cdiv by {args[1]} in '{ast.unparse(node)}'")
            return fn(*args)
        raise self._error(f"'{ast.unparse(node)}' is not allowed (integers, the contract's dims, + - * //, "
                          "cdiv, min, max)")

    def evaluate(self, env: Mapping[str, Any]) -> tuple[tuple[Any, ...], tuple[Any, ...], Any]:
        """(grid, block, shared) evaluated over ``env`` (ints, or symbolic sizes that support the
        operators); grid and block padded to 3 axes with 1."""
        grid = tuple(self._eval(e, env) for e in self.grid) + (1,) * (3 - len(self.grid))
        block = tuple(self._eval(e, env) for e in self.block) + (1,) * (3 - len(self.block))
        shared = 0 if self.shared is None else self._eval(self.shared, env)
        return grid, block, shared

    def shape(self, dims: Mapping[str, int]) -> LaunchShape:
        """The concrete shape for ``dims``; checked against CUDA's launch limits."""
        grid, block, shared = self.evaluate(dims)
        for what, vals in (("grid", grid), ("block", block)):
            for axis, (v, limit) in enumerate(zip(vals, DIM_LIMITS[what])):
                if not isinstance(v, int) or not 1 <= v <= limit:
                    raise self._error(f"{what} {'xyz'[axis]} = {v} for {_dims_text(dims)}: outside 1..{limit}")
        threads = block[0] * block[1] * block[2]
        if threads > 1024:
            raise self._error(f"block {block} has {threads} threads; at most 1024")
        if not isinstance(shared, int) or not 0 <= shared <= MAX_DYNAMIC_SHARED:
            raise self._error(f"shared = {shared} bytes for {_dims_text(dims)}: outside 0..{MAX_DYNAMIC_SHARED}")
        return LaunchShape(grid, block, shared)  # type: ignore[arg-type]


def _dims_text(dims: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in dims.items())


def _axes(where: str, key: str, text: str) -> tuple[ast.expr, ...]:
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise LaunchHeaderError(f"{where}: volta-launch: {key}={text.strip()!r} is not an expression: "
                                f"{e.msg}") from None
    axes = tuple(node.elts) if isinstance(node, ast.Tuple) else (node,)
    if not 1 <= len(axes) <= 3:
        raise LaunchHeaderError(f"{where}: volta-launch: {key} needs 1 to 3 axes, got {len(axes)}")
    return axes


def parse_header(text: str, source: str = "<ptx>") -> LaunchHeader | None:
    """The `// volta-launch:` header among the first HEADER_LINES lines of PTX ``text`` (None when
    there is none); raises LaunchHeaderError for a malformed one or for two of them."""
    found: LaunchHeader | None = None
    for lineno, line in enumerate(text.splitlines()[:HEADER_LINES], 1):
        m = _HEADER.match(line)
        if m is None:
            continue
        where = f"{source}:{lineno}"
        if found is not None:
            raise LaunchHeaderError(f"{where}: volta-launch: a second header (the first is at {found.where})")
        body = m.group(1)
        keys = list(_KEY.finditer(body))
        if not keys or body[:keys[0].start()].strip():
            raise LaunchHeaderError(f"{where}: volta-launch: expected 'grid=(...) block=(...) [shared=...]', "
                                    f"got {body.strip()!r}")
        values: dict[str, str] = {}
        for i, k in enumerate(keys):
            end = keys[i + 1].start() if i + 1 < len(keys) else len(body)
            if k.group(1) in values:
                raise LaunchHeaderError(f"{where}: volta-launch: '{k.group(1)}' given twice")
            values[k.group(1)] = body[k.end():end]
        for required in ("grid", "block"):
            if required not in values:
                raise LaunchHeaderError(f"{where}: volta-launch: missing '{required}=(...)'")
        shared = None
        if "shared" in values:
            axes = _axes(where, "shared", values["shared"])
            if len(axes) != 1:
                raise LaunchHeaderError(f"{where}: volta-launch: shared is one expression (bytes)")
            shared = axes[0]
        found = LaunchHeader(_axes(where, "grid", values["grid"]), _axes(where, "block", values["block"]), shared,
                             where, line.strip())
    return found


def read_header(ptx: str | Path) -> LaunchHeader | None:
    """parse_header of a PTX file (a Path) or of PTX text (a str)."""
    if isinstance(ptx, Path):
        return parse_header(ptx.read_text(errors="replace"), str(ptx))
    return parse_header(ptx)


def candidate_launch(contract: Contract, ptx: str | Path, dims: Mapping[str, int]) -> LaunchShape | None:
    """The launch shape a candidate's header asks for at ``dims`` (a contract instance's dims), or
    None when it has no header (then Triton's grid and block for the contract apply). ``ptx``: the
    PTX file (a Path) or its text (a str)."""
    header = read_header(ptx)
    return None if header is None else header_shape(header, contract, dims)


def header_shape(header: LaunchHeader, contract: Contract, dims: Mapping[str, int]) -> LaunchShape:
    """``header``'s shape at ``dims``; a name that is not one of the contract's dims is an error
    even where it would not be evaluated (``min(M, X)``)."""
    for node in (*header.grid, *header.block, *(() if header.shared is None else (header.shared,))):
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - {
            c.func.id for c in ast.walk(node) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
        for name in sorted(names - set(dims)):
            raise LaunchHeaderError(f"{header.where}: volta-launch: unknown name '{name}'; contract "
                                    f"{contract.name}'s dims are {', '.join(sorted(dims))}")
    return header.shape(dims)


@dataclass
class ContractLaunch:
    """A contract's launch of one kernel: the launch, the host arrays, the Triton build that gave
    the parameter list, and the candidate header that reshaped it (None: Triton's shape)."""

    launch: Launch
    arrays: dict[str, Any]
    compiled: CompiledPTX
    header: LaunchHeader | None = None


def nearest_arch(cap: int, min_arch: int) -> str:
    """The suite target nearest below compute capability ``cap`` that the contract supports."""
    for a, name in ((120, "sm_120"), (100, "sm_100a"), (90, "sm_90a"), (89, "sm_89"), (80, "sm_80")):
        if cap >= a and a >= min_arch:
            return name
    return f"sm_{max(min_arch, 80)}"


def contract_launch(contract: Contract, module: ptx_parser.Module, *, source: str | Path | None = None,
                    instance: str = "verify", seed: int = 0, distribution: str = "normal",
                    entry: str | None = None, arch: str | None = None, lazy: bool = False,
                    arrays: dict[str, Any] | None = None, compiled: CompiledPTX | None = None) -> ContractLaunch:
    """The contract's launch for the one kernel of ``module`` (or ``entry``): buffers from its input
    generators (or ``arrays``), parameters checked against the kernel's, the parameter list, threads
    and shared memory from Triton's build for ``arch`` (default: the suite target nearest the PTX's
    own ``.target``), and grid/block/shared from the candidate's `// volta-launch:` header in
    ``source`` (the PTX file or text) when it has one. lazy: the buffers are made page by page where
    the run touches them (the checker). ``compiled``: Triton's build to take the parameter list from
    (default: compiled for ``arch`` and ``instance``; a build of another instance of the contract
    has the same parameters unless an integer argument is 1 in one of them and not the other).
    Raises ValueError for a kernel that does not fit."""
    from .emulate import check_signature, kernel_launch

    if arch is None:
        target = module.arch or "sm_90a"
        cap = int("".join(ch for ch in target[3:] if ch.isdigit()) or 90)
        arch = nearest_arch(cap, contract.min_arch)
    if compiled is None:
        compiled = compile_contract(contract, arch, instance)
    kernels = [f for f in module.kernels if entry is None or f.name == entry]
    if len(kernels) != 1:
        raise ValueError(f"{'no kernel named ' + repr(entry) if entry else f'{len(kernels)} kernels'} in the "
                         "module; choose one with --entry")
    k = kernels[0]
    check_signature(contract, compiled, k)
    if arrays is None:
        arrays = contract.make_inputs(instance, distribution, seed, lazy=lazy)
    launch = kernel_launch(contract, compiled, k, arrays, instance)
    header = apply_header(launch, contract, source, instance) if source is not None else None
    return ContractLaunch(launch, arrays, compiled, header)


def apply_header(launch: Launch, contract: Contract, source: str | Path, instance: str) -> LaunchHeader | None:
    """Give ``launch`` (a contract's launch of the kernel in ``source``, a PTX file or its text) the
    grid, block and dynamic shared memory of the source's `// volta-launch:` header at ``instance``;
    returns the header (None: none, the launch is unchanged)."""
    header = read_header(source)
    if header is not None:
        shape = header_shape(header, contract, contract.resolve(instance).dims)
        launch.grid, launch.block, launch.dynamic_shared_bytes = shape.grid, shape.block, shape.dynamic_shared_bytes
    return header


def header_assumption(header: LaunchHeader) -> str:
    """The line a verdict prints when a candidate header chose the launch shape."""
    return (f"launch shape from the candidate's header ({header.where}: {header.text.lstrip('/ ').strip()}), "
            "not from the contract's Triton build")


class _DimText:
    """A dim as header text: the operators a contract's grid function uses build the expression
    (``triton.cdiv(M, 4)`` is ``(M + 4 - 1) // 4``)."""

    def __init__(self, text: str) -> None:
        self.text = text

    @staticmethod
    def _of(v: Any) -> "_DimText":
        if isinstance(v, _DimText):
            return v
        if type(v) is int:
            return _DimText(str(v) if v >= 0 else f"({v})")
        raise TypeError(f"{v!r} in a grid expression")

    def _bin(self, op: str, other: Any, flip: bool = False) -> "_DimText":
        a, b = (self._of(other), self) if flip else (self, self._of(other))
        return _DimText(f"({a.text} {op} {b.text})")

    def __add__(self, o: Any) -> "_DimText": return self._bin("+", o)
    def __radd__(self, o: Any) -> "_DimText": return self._bin("+", o, True)
    def __sub__(self, o: Any) -> "_DimText": return self._bin("-", o)
    def __rsub__(self, o: Any) -> "_DimText": return self._bin("-", o, True)
    def __mul__(self, o: Any) -> "_DimText": return self._bin("*", o)
    def __rmul__(self, o: Any) -> "_DimText": return self._bin("*", o, True)
    def __floordiv__(self, o: Any) -> "_DimText": return self._bin("//", o)
    def __rfloordiv__(self, o: Any) -> "_DimText": return self._bin("//", o, True)
    def __neg__(self) -> "_DimText":
        m = re.fullmatch(r"\(\(-(.+)\) // (\d+)\)", self.text)  # -((-a) // b): cdiv(a, b)
        return _DimText(f"cdiv({m.group(1)}, {m.group(2)})" if m else f"(-{self.text})")


def contract_grid_text(contract: Contract, instance: str = "verify") -> str | None:
    """The contract's grid as a header's ``grid=(...)`` text over its dims (the grid function run on
    symbolic dims), checked to give the contract's own grid at ``instance``; None when the function
    needs concrete sizes (a comparison, ``min``, ``next_power_of_2``)."""
    dims = contract.resolve(instance).dims
    try:
        raw = tuple(contract.grid({n: _DimText(n) for n in dims}))
    except (TypeError, ValueError, ArithmeticError, KeyError, AttributeError):
        return None
    if not 1 <= len(raw) <= 3 or not all(isinstance(v, (_DimText, int)) for v in raw):
        return None
    axes = [_DimText._of(v).text for v in raw] + ["1"] * (3 - len(raw))
    text = f"({', '.join(axes)})"
    header = parse_header(f"// volta-launch: grid={text} block=(1, 1, 1)")
    assert header is not None
    if header.evaluate(dims)[0] != tuple(contract.resolve(instance).grid):
        return None
    return text


__all__ = ["LaunchHeader", "LaunchHeaderError", "LaunchShape", "ContractLaunch", "parse_header", "read_header",
           "candidate_launch", "header_shape", "contract_launch", "apply_header", "nearest_arch", "header_assumption",
           "cdiv", "HEADER_LINES", "contract_grid_text"]
