"""A CUDA GPU as a :class:`~harness.judge.device.Device`, and its timing :class:`Clock`, through
cuda-python's driver API (``cuda.bindings.driver``; the pattern tests/emulator/tma_gpu.py ran on
an H200).

The harness owns everything: cuMemAlloc'd buffers, the module loaded from the cubin ptxas made of
the verified PTX (cuModuleLoadData), one cuLaunchKernel per launch on the legacy default stream
(where Triton's launches, torch's and the events go too: the primary context is shared). Kernel
parameters are packed as the .param space lays them out (symexec.launch.pack_params, PTX ISA
5.1.6) and passed one pointer per parameter; a tensor map is encoded with cuTensorMapEncodeTiled.

A fault (illegal address, trap, illegal instruction) leaves the CUDA context unusable: the
:class:`LaunchFailure` says ``sticky`` and the process must end (the GPU worker restarts).
"""

from __future__ import annotations

import ctypes
import time
from typing import Any

import numpy as np

from .device import KernelCode, KernelLaunch, LaunchFailure, Ptr, alloc_of
from .report import Reason

_DTYPE = {"uint8": 0, "uint16": 1, "uint32": 2, "int32": 3, "uint64": 4, "int64": 5, "float16": 6, "float32": 7,
          "float64": 8, "bfloat16": 9}
#: Errors after which the context is lost (CUDA driver API, CUresult).
_FAULTS = {"CUDA_ERROR_ILLEGAL_ADDRESS": Reason.MEMORY_FAULT, "CUDA_ERROR_MISALIGNED_ADDRESS": Reason.MEMORY_FAULT,
           "CUDA_ERROR_ILLEGAL_INSTRUCTION": Reason.LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED": Reason.LAUNCH_FAILED,
           "CUDA_ERROR_ASSERT": Reason.LAUNCH_FAILED, "CUDA_ERROR_HARDWARE_STACK_ERROR": Reason.LAUNCH_FAILED,
           "CUDA_ERROR_INVALID_PC": Reason.LAUNCH_FAILED, "CUDA_ERROR_INVALID_ADDRESS_SPACE": Reason.MEMORY_FAULT}


def driver() -> Any:
    try:
        from cuda.bindings import driver as cu
    except ImportError:  # cuda-python 12.x before the bindings split
        from cuda import cuda as cu  # type: ignore[no-redef]
    return cu


class CudaError(RuntimeError):
    def __init__(self, name: str, what: str) -> None:
        super().__init__(f"{what}: {name}")
        self.name = name


def _name(cu: Any, err: Any) -> str:
    try:
        res = cu.cuGetErrorName(err)
        return res[1].decode() if isinstance(res[1], bytes) else str(res[1])
    except Exception:  # pragma: no cover - only on a GPU
        return str(err)


def ok(cu: Any, res: Any, what: str = "CUDA call") -> Any:
    err, *rest = res if isinstance(res, tuple) else (res,)
    if err != cu.CUresult.CUDA_SUCCESS:
        raise CudaError(_name(cu, err), what)
    return rest[0] if len(rest) == 1 else rest


class Cuda:
    """The primary context of one device, made current (shared with torch and Triton)."""

    def __init__(self, ordinal: int = 0) -> None:
        cu = self.cu = driver()
        ok(cu, cu.cuInit(0), "cuInit")
        self.dev = ok(cu, cu.cuDeviceGet(ordinal))
        self.ctx = ok(cu, cu.cuDevicePrimaryCtxRetain(self.dev))
        ok(cu, cu.cuCtxSetCurrent(self.ctx))
        raw = ok(cu, cu.cuDeviceGetName(256, self.dev))
        self.name = (raw.split(b"\0")[0].decode() if isinstance(raw, bytes) else str(raw)).strip()
        attr = cu.CUdevice_attribute
        major = ok(cu, cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.dev))
        minor = ok(cu, cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.dev))
        self.capability = 10 * int(major) + int(minor)
        self.l2_bytes = int(ok(cu, cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, self.dev)))

    def sync(self, what: str = "synchronize") -> None:
        self.check(self.cu.cuCtxSynchronize(), what)

    def check(self, res: Any, what: str) -> Any:
        try:
            return ok(self.cu, res, what)
        except CudaError as e:
            reason = _FAULTS.get(e.name)
            if reason is not None:
                raise LaunchFailure(reason, f"{what}: {e.name}", sticky=True) from None
            raise LaunchFailure(Reason.LAUNCH_FAILED, str(e)) from None


def encode_tensor_map(cuda: Cuda, tm: Any, base: int) -> bytes:
    """cuTensorMapEncodeTiled of a symexec TensorMap whose tensor starts at ``base``: 128 bytes."""
    cu = cuda.cu
    u64 = lambda xs: [cu.cuuint64_t(int(x)) for x in xs]  # noqa: E731
    u32 = lambda xs: [cu.cuuint32_t(int(x)) for x in xs]  # noqa: E731
    m = ok(cu, cu.cuTensorMapEncodeTiled(
        cu.CUtensorMapDataType(_DTYPE[tm.dtype.value]), tm.rank, base, u64(tm.global_dims), u64(tm.global_strides),
        u32(tm.box_dims), u32(tm.element_strides), cu.CUtensorMapInterleave(tm.interleave.value),
        cu.CUtensorMapSwizzle(tm.swizzle.value), cu.CUtensorMapL2promotion(tm.l2_promotion.value),
        cu.CUtensorMapFloatOOBfill(tm.oob_fill.value)), "cuTensorMapEncodeTiled")
    return b"".join(int(w).to_bytes(8, "little") for w in m.opaque)


class PackedParams:
    """The kernelParams array of one launch: one host buffer per .param, kept alive with it."""

    def __init__(self, decls: Any, values: list[Any]) -> None:
        from symexec.launch import pack_params, param_layout

        raw, offsets = pack_params(decls, values, {})
        self.buffers = []
        for p in decls:
            size = param_layout(p)[2]
            off = offsets[p.name]
            self.buffers.append(ctypes.create_string_buffer(raw[off:off + size], max(size, 1)))
        self.argv = (ctypes.c_void_p * max(len(self.buffers), 1))(*[ctypes.addressof(b) for b in self.buffers])

    @property
    def address(self) -> int:
        return ctypes.addressof(self.argv)


class LoadedKernel:
    def __init__(self, cuda: Cuda, code: KernelCode) -> None:
        import ptx_parser

        cu = cuda.cu
        self.cuda, self.code = cuda, code
        self.module = cuda.check(cu.cuModuleLoadData(code.cubin), "cuModuleLoadData")
        self.function = cuda.check(cu.cuModuleGetFunction(self.module, code.entry.encode()), "cuModuleGetFunction")
        self.params = ptx_parser.parse(code.ptx, code.name).function(code.entry).params or ()
        self._shared = 0

    def prepare(self, launch: KernelLaunch, resolve: Any) -> PackedParams:
        """The packed parameters of ``launch``; ``resolve`` maps a Ptr to its device address."""
        from symexec.tensormap import TensorMap

        values: list[Any] = []
        for v in launch.params:
            if isinstance(v, Ptr):
                values.append(resolve(v))
            elif isinstance(v, TensorMap):
                base = resolve(Ptr(alloc_of(v.buffer), v.offset)) if v.buffer is not None else v.offset
                values.append({"bytes": list(encode_tensor_map(self.cuda, v, base))})
            else:
                values.append(v)
        self.ensure_shared(launch.dynamic_shared)
        return PackedParams(self.params, values)

    def ensure_shared(self, nbytes: int) -> None:
        """Dynamic shared memory above 48 KiB must be allowed per function first."""
        if nbytes > self._shared and nbytes > 48 * 1024:
            cu = self.cuda.cu
            self.cuda.check(cu.cuFuncSetAttribute(
                self.function, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes),
                "cuFuncSetAttribute(max dynamic shared)")
            self._shared = nbytes

    def enqueue(self, launch: KernelLaunch, packed: PackedParams) -> None:
        """cuLaunchKernel on the default stream, no synchronisation."""
        cu = self.cuda.cu
        self.cuda.check(cu.cuLaunchKernel(self.function, *launch.grid, *launch.block, launch.dynamic_shared, 0,
                                          packed.address, 0), "cuLaunchKernel")


class CudaDevice:
    """The numeric test's Device on a GPU (see the module docstring)."""

    def __init__(self, cuda: Cuda | None = None) -> None:
        self.cuda = cuda or Cuda()
        self.name = f"{self.cuda.name} (sm_{self.cuda.capability})"
        self.memory: dict[int, tuple[int, int]] = {}  # handle -> (device address, bytes)
        self._next = 0

    def load(self, code: KernelCode) -> LoadedKernel:
        return LoadedKernel(self.cuda, code)

    def alloc(self, nbytes: int) -> int:
        ptr = self.cuda.check(self.cuda.cu.cuMemAlloc(max(nbytes, 1)), "cuMemAlloc")
        handle, self._next = self._next, self._next + 1
        self.memory[handle] = (int(ptr), nbytes)
        return handle

    def address(self, p: Ptr) -> int:
        return self.memory[p.alloc][0] + p.offset

    def upload(self, alloc: int, data: np.ndarray) -> None:
        ptr, n = self.memory[alloc]
        host = np.ascontiguousarray(np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8))
        self.cuda.check(self.cuda.cu.cuMemcpyHtoD(ptr, host, n), "cuMemcpyHtoD")

    def download(self, alloc: int) -> np.ndarray:
        ptr, n = self.memory[alloc]
        host = np.empty(n, np.uint8)
        self.cuda.check(self.cuda.cu.cuMemcpyDtoH(host, ptr, n), "cuMemcpyDtoH")
        return host

    def launch(self, kernel: LoadedKernel, launch: KernelLaunch) -> None:
        packed = kernel.prepare(launch, self.address)
        kernel.enqueue(launch, packed)
        self.cuda.sync(f"{kernel.code.entry} launch")

    def free_all(self) -> None:
        for ptr, _ in self.memory.values():
            self.cuda.cu.cuMemFree(ptr)
        self.memory.clear()


class CudaClock:
    """Events on the default stream, an L2 flush by cuMemsetD8Async over ``flush_bytes`` (at least
    four times the L2), and a synchronised wall clock."""

    def __init__(self, cuda: Cuda, flush_bytes: int | None = None) -> None:
        cu = self.cu = cuda.cu
        self.cuda = cuda
        self.flush_bytes = flush_bytes or max(4 * cuda.l2_bytes, 256 << 20)
        self.flush_buf = ok(cu, cu.cuMemAlloc(self.flush_bytes), "cuMemAlloc(flush)")
        flags = cu.CUevent_flags.CU_EVENT_DEFAULT
        self.e0 = ok(cu, cu.cuEventCreate(flags))
        self.e1 = ok(cu, cu.cuEventCreate(flags))
        self._flip = 0

    def flush_l2(self) -> None:
        self._flip ^= 1
        self.cuda.check(self.cu.cuMemsetD8Async(self.flush_buf, self._flip, self.flush_bytes, 0), "L2 flush")

    def start(self) -> None:
        self.cuda.check(self.cu.cuEventRecord(self.e0, 0), "cuEventRecord")

    def stop(self) -> None:
        self.cuda.check(self.cu.cuEventRecord(self.e1, 0), "cuEventRecord")

    def sync(self) -> None:
        self.cuda.sync("timing")

    def elapsed_ms(self) -> float:
        return float(self.cuda.check(self.cu.cuEventElapsedTime(self.e0, self.e1), "cuEventElapsedTime"))

    def now(self) -> float:
        return time.perf_counter()
