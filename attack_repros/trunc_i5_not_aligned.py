"""Latent hole (fixed here): WarpIndex took tid.x truncated to i5 as aligned; read signed an
i5 run is [-16, 16), so `icmp slt i5` / `sext i5` + `lshr 5` split every warp. Before the fix
the first two lines print True; the per-warp sets show both values occur in every warp.
Not reached from Python source so far (Numba + instcombine never emitted i5 in the attacks tried).
"""

from simtsafe.lowering._irform import compiled_form
from simtsafe.verify._divergence import WarpIndex

IR = """
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @use(i1, i32, i1, i32)
define void @k() {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %n = trunc i32 %t to i5
  %c = icmp slt i5 %n, 0
  %s = sext i5 %n to i32
  %h = lshr i32 %s, 5
  %n6 = trunc i32 %t to i6
  %c6 = icmp slt i6 %n6, 0
  %s6 = sext i6 %n6 to i32
  %h6 = lshr i32 %s6, 5
  call void @use(i1 %c, i32 %h, i1 %c6, i32 %h6)
  ret void
}
"""
form = compiled_form([IR], "k")
defs = {i.result: i for b in form.blocks for i in b.instrs if i.result}
w = WarpIndex(defs, (256, 1, 1))
for b in form.blocks:
    for i in b.instrs:
        if i.opcode in ("icmp", "lshr"):
            print(i.text.strip(), "->", w.warp_uniform(i))
# what the values really are, per warp
for q in range(8):
    xs = range(32 * q, 32 * q + 32)

    def i5(x):
        v = x & 31
        return v - 32 if v >= 16 else v

    print(q, {i5(x) < 0 for x in xs}, {(i5(x) & 0xFFFFFFFF) >> 5 for x in xs})
