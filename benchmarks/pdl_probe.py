"""Probe: what programmatic dependent launch (PDL) saves on a decode-shaped chain of kernels.

Not a simtsafe benchmark: raw CUDA C++ (compiled by CuPy's NVRTC) launched through
``cuLaunchKernelEx`` and captured into one CUDA graph, to decide whether simtsafe should
offer dependent launches before building them. The chain has the 4b decode's shape: per
layer a 31.5 MB, 21 MB, 99.6 MB and 49.8 MB weight stream (the GEMVs) and two tiny kernels
(the q/k append and the attention at context 0), 36 layers; kernel i reads kernel i-1's
output after ``griddepcontrol.wait``, so every launch depends on the one before.

Variants (every kernel has the wait at its entry; it returns at once without PDL):

* ``serial``: no launch attribute (the graph as simtsafe builds it today);
* ``pdl``: ``PROGRAMMATIC_STREAM_SERIALIZATION`` on every launch;
* ``pdl+trigger``: and ``griddepcontrol.launch_dependents`` at each kernel's entry;
* ``pdl+trigger+prefetch``: and each block's weight slice prefetched to L2 before the wait;
* ``pdl+prefetch``: the prefetch without the early trigger.

Prints the chain's time per "token" and the weight bytes per second, against a copy.
"""

from __future__ import annotations

import argparse
import ctypes
import statistics

SRC = r"""
extern "C" __global__ void stream(const uint4* __restrict__ w, const float* __restrict__ x,
                                  float* __restrict__ out, long long n16, int mode) {
    long long per = (n16 + gridDim.x - 1) / gridDim.x;
    long long lo = per * blockIdx.x, hi = min(lo + per, n16);
    if (mode & 1) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    if (mode & 2) {
        for (long long i = lo + 8 * threadIdx.x; i < hi; i += 8 * blockDim.x)
            asm volatile("prefetch.global.L2 [%0];" :: "l"(w + i));
    }
    asm volatile("griddepcontrol.wait;" ::: "memory");
    float s = 0.f;
    long long i = lo + threadIdx.x;
    for (; i + 3 * blockDim.x < hi; i += 4 * blockDim.x) {
        uint4 a = w[i], b = w[i + blockDim.x], c = w[i + 2 * blockDim.x], d = w[i + 3 * blockDim.x];
        s += __uint_as_float(a.x ^ b.y ^ c.z ^ d.w) + __uint_as_float(a.y ^ b.z ^ c.w ^ d.x);
    }
    for (; i < hi; i += blockDim.x) { uint4 a = w[i]; s += __uint_as_float(a.x ^ a.w); }
    s = s * x[0];
    for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    __shared__ float part[32];
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.f;
        for (int k = 0; k < blockDim.x / 32; ++k) t += part[k];
        out[blockIdx.x] = t * 1e-30f + 1.0f;
    }
}
"""

MB = 1 << 20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=36)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--blocks-per-sm", type=int, default=4)
    args = ap.parse_args()

    import cupy as cp
    from cuda.bindings import driver as drv

    def ok(r):  # type: ignore[no-untyped-def]
        err, *rest = r if isinstance(r, tuple) else (r,)
        if err != drv.CUresult.CUDA_SUCCESS:
            raise RuntimeError(str(err))
        return rest[0] if len(rest) == 1 else rest

    dev = cp.cuda.Device()
    sms = dev.attributes["MultiProcessorCount"]
    fn = cp.RawModule(code=SRC, options=("-std=c++17",)).get_function("stream")
    func = drv.CUfunction(int(fn.kernel.ptr))
    sizes = [int(31.5 * MB), 21 * MB, int(99.6 * MB), int(49.8 * MB)]
    bufs = [cp.random.randint(0, 2**31, s // 4, dtype=cp.int32) for s in sizes]
    outs = [cp.zeros(sms * 64, cp.float32) for _ in range(2)]
    outs[0][:] = 1.0
    outs[1][:] = 1.0
    stream = ok(drv.cuStreamCreate(int(drv.CUstream_flags.CU_STREAM_NON_BLOCKING)))
    # one layer: qkv, two tiny kernels (64 kB over 32 blocks), o_proj, gate_up, down
    layer = [(0, None), ("tiny", 32), ("tiny", 32), (1, None), (2, None), (3, None)]
    tiny = cp.zeros(16384, cp.int32)
    keep: list = []

    def launch(k: int, src, grid: int, attr: bool, mode: int) -> None:  # type: ignore[no-untyped-def]
        w = tiny if src == "tiny" else bufs[src]
        vals = [
            ctypes.c_uint64(w.data.ptr),
            ctypes.c_uint64(outs[k % 2].data.ptr),
            ctypes.c_uint64(outs[(k + 1) % 2].data.ptr),
            ctypes.c_int64(w.nbytes // 16),
            ctypes.c_int32(mode),
        ]
        ptrs = (ctypes.c_void_p * len(vals))(*[ctypes.addressof(v) for v in vals])
        keep.append((vals, ptrs))
        cfg = drv.CUlaunchConfig()
        cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = grid, 1, 1
        cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = 256, 1, 1
        cfg.sharedMemBytes = 0
        cfg.hStream = stream
        if attr:
            a = drv.CUlaunchAttribute()
            a.id = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
            a.value.programmaticStreamSerializationAllowed = 1
            cfg.attrs = [a]
            cfg.numAttrs = 1
        else:
            cfg.numAttrs = 0
        (err,) = drv.cuLaunchKernelEx(cfg, func, ctypes.addressof(ptrs), 0)
        if err != drv.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuLaunchKernelEx: {err}")

    def chain_graph(attr: bool, mode: int):  # type: ignore[no-untyped-def]
        mode_capture = drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED
        ok(drv.cuStreamBeginCapture(stream, mode_capture))
        k = 0
        for _ in range(args.layers):
            for src, g in layer:
                launch(k, src, g or sms * args.blocks_per_sm, attr, mode)
                k += 1
        graph = ok(drv.cuStreamEndCapture(stream))
        return ok(drv.cuGraphInstantiate(graph, 0))

    def time_graph(ex) -> float:  # type: ignore[no-untyped-def]
        e0 = ok(drv.cuEventCreate(0))
        e1 = ok(drv.cuEventCreate(0))
        ok(drv.cuGraphLaunch(ex, stream))
        ok(drv.cuStreamSynchronize(stream))
        ts = []
        for _ in range(args.reps):
            ok(drv.cuEventRecord(e0, stream))
            ok(drv.cuGraphLaunch(ex, stream))
            ok(drv.cuEventRecord(e1, stream))
            ok(drv.cuEventSynchronize(e1))
            ts.append(ok(drv.cuEventElapsedTime(e0, e1)))
        return statistics.median(ts) / 1e3

    big = cp.zeros(1 << 28, cp.int32)  # copy ceiling: 1 GiB read + 1 GiB written
    dst = cp.empty_like(big)
    ev0, ev1 = cp.cuda.Event(), cp.cuda.Event()
    cts = []
    for _ in range(5):
        ev0.record()
        dst[...] = big
        ev1.record()
        ev1.synchronize()
        cts.append(cp.cuda.get_elapsed_time(ev0, ev1) / 1e3)
    copy_bw = 2 * big.nbytes / min(cts)
    del big, dst
    wbytes = args.layers * sum(sizes)
    print(
        f"{dev.name if hasattr(dev, 'name') else 'GPU'}: {sms} SMs, copy {copy_bw / 1e9:.0f} GB/s"
    )
    print(f"chain: {args.layers} layers x 6 kernels, {wbytes / 1e9:.2f} GB of weight streams")
    print("| variant | ms per chain | weight GB/s | % of copy | us per kernel over the copy time |")
    print("|---|---:|---:|---:|---:|")
    ideal = wbytes / copy_bw
    for name, attr, mode in (
        ("serial", False, 0),
        ("pdl", True, 0),
        ("pdl+trigger", True, 1),
        ("pdl+trigger+prefetch", True, 3),
        ("pdl+prefetch", True, 2),
        ("serial (again)", False, 0),
    ):
        try:
            t = time_graph(chain_graph(attr, mode))
            over = (t - ideal) / (6 * args.layers) * 1e6
            print(
                f"| {name} | {t * 1e3:.3f} | {wbytes / t / 1e9:.0f} | {100 * wbytes / t / copy_bw:.1f}"
                f" | {over:.2f} |",
                flush=True,
            )
        except Exception as exc:  # noqa: BLE001 - a probe: report and go on
            print(f"| {name} | failed: {type(exc).__name__}: {exc} | | | |", flush=True)


if __name__ == "__main__":
    main()
