"""Does the driver refuse every block shape other than .reqntid's? (ctypes on libcuda; needs a GPU)

Hand-written PTX kernels stamped .reqntid; each launch records, per thread, tid.x/y/z and
ntid.x/y/z. Prints accept/refuse for permutations of the same thread count, smaller and
larger blocks, and the one-thread block."""
import ctypes, struct, sys

cu = ctypes.CDLL("libcuda.so.1")

def ck(r, what):
    if r != 0:
        s = ctypes.c_char_p()
        cu.cuGetErrorName(r, ctypes.byref(s))
        raise RuntimeError(f"{what}: {r} {s.value}")

PTX = r"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry probe(.param .u64 out)
.reqntid RX, RY, RZ
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x; mov.u32 %r2, %tid.y; mov.u32 %r3, %tid.z;
  mov.u32 %r4, %ntid.x; mov.u32 %r5, %ntid.y; mov.u32 %r6, %ntid.z;
  mad.lo.u32 %r7, %r3, %r5, %r2;
  mad.lo.u32 %r7, %r7, %r4, %r1;
  mul.wide.u32 %rd2, %r7, 24;
  add.u64 %rd3, %rd1, %rd2;
  st.global.v2.u32 [%rd3], {%r1, %r2};
  st.global.v2.u32 [%rd3+8], {%r3, %r4};
  st.global.v2.u32 [%rd3+16], {%r5, %r6};
  ret;
}
"""

ck(cu.cuInit(0), "init")
dev = ctypes.c_int(); ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "dev")
ctx = ctypes.c_void_p(); ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "ctx")
ck(cu.cuCtxSetCurrent(ctx), "setctx")
ver = ctypes.c_int(); cu.cuDriverGetVersion(ctypes.byref(ver)); print("driver", ver.value)
buf = ctypes.c_uint64(); ck(cu.cuMemAlloc_v2(ctypes.byref(buf), 24 * 1024), "alloc")

def trial(req, block):
    src = PTX.replace("RX", str(req[0])).replace("RY", str(req[1])).replace("RZ", str(req[2])).encode()
    mod = ctypes.c_void_p(); ck(cu.cuModuleLoadData(ctypes.byref(mod), src), "load")
    fn = ctypes.c_void_p(); ck(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"probe"), "fn")
    cu.cuMemsetD8_v2(buf, 0xFF, 24 * 1024)
    arg = ctypes.c_uint64(buf.value)
    params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(arg), ctypes.c_void_p))
    r = cu.cuLaunchKernel(fn, 1, 1, 1, block[0], block[1], block[2], 0, None, params, None)
    s = cu.cuCtxSynchronize()
    n = block[0] * block[1] * block[2]
    seen = None
    if r == 0 and s == 0:
        host = (ctypes.c_uint32 * (6 * n))()
        ck(cu.cuMemcpyDtoH_v2(host, buf, 24 * n), "copy")
        vals = [tuple(host[6 * t: 6 * t + 6]) for t in range(n)]
        maxt = tuple(max(v[a] for v in vals) for a in range(3))
        seen = f"max tid {maxt}, ntid {vals[0][3:]}"
    cu.cuModuleUnload(mod)
    print(f"reqntid {req} block {block}: launch rc {r} sync rc {s} {seen or ''}", flush=True)

for req, blocks in [
    ((64, 1, 1), [(64, 1, 1), (32, 2, 1), (16, 4, 1), (1, 64, 1), (8, 8, 1), (4, 4, 4), (1, 1, 64),
                  (1, 1, 1), (2, 1, 1), (32, 1, 1), (63, 1, 1), (65, 1, 1), (128, 1, 1)]),
    ((8, 4, 2), [(8, 4, 2), (64, 1, 1), (8, 8, 1), (4, 4, 4), (2, 4, 8), (16, 4, 1), (8, 2, 4),
                 (1, 1, 1), (8, 4, 1), (8, 1, 1)]),
    ((256, 1, 1), [(256, 1, 1), (128, 2, 1), (32, 8, 1), (1, 1, 1), (1, 256, 1)]),
]:
    for b in blocks:
        trial(req, b)
