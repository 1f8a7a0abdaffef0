"""Run attack candidates: python attack_repros/candidates.py (with/without NUMBA_ENABLE_CUDASIM=1)."""

import sys

from attack_repros.harness import try_one
from tests.kernels.warp_index_rules import kernel_1d, kernel_2d

ONE = [
    ("shift3_lt4", "(cuda.threadIdx.x >> 3) < 4", "block=256", (256, 1, 1)),
    ("int8_neg", "np.int8(cuda.threadIdx.x) < 0", "block=256", (256, 1, 1)),
    ("int8_floordiv", "np.int8(cuda.threadIdx.x) // 32 == -1", "block=256", (256, 1, 1)),
    ("int8_shift", "(np.int8(cuda.threadIdx.x) >> 5) == -1", "block=256", (256, 1, 1)),
    ("int16_shift", "(np.int16(cuda.threadIdx.x) >> 5) == 1", "block=256", (256, 1, 1)),
    ("uint8_shift", "(np.uint8(cuda.threadIdx.x) >> 5) == 1", "block=256", (256, 1, 1)),
    (
        "f32_div32",
        "int(np.float32(cuda.threadIdx.x) / np.float32(32)) == 1",
        "block=256",
        (256, 1, 1),
    ),
    ("mul_03125", "int(cuda.threadIdx.x * 0.03125) == 1", "block=256", (256, 1, 1)),
    ("div_3199", "int(cuda.threadIdx.x / 31.99) == 1", "block=256", (256, 1, 1)),
    (
        "f16_div",
        "int(np.float16(cuda.threadIdx.x) / np.float16(32)) == 1",
        "block=256",
        (256, 1, 1),
    ),
    ("round_div", "round(cuda.threadIdx.x / 32) == 1", "block=256", (256, 1, 1)),
    ("sub32_shift", "(cuda.threadIdx.x - 32) >> 5 == -1", "block=256", (256, 1, 1)),
    ("sub16_lt0", "cuda.threadIdx.x - 16 < 0", "block=256", (256, 1, 1)),
    ("sub32_lt0", "cuda.threadIdx.x - 32 < 0", "block=256", (256, 1, 1)),
    ("xor_shift", "((cuda.threadIdx.x ^ 16) >> 5) == 0", "block=256", (256, 1, 1)),
    ("or_shift", "((cuda.threadIdx.x | 16) >> 5) == 0", "block=256", (256, 1, 1)),
    ("lt_n32", "cuda.threadIdx.x < 32 * n", "block=256", (256, 1, 1)),
    ("lt_n", "cuda.threadIdx.x < n", "block=256", (256, 1, 1)),
    ("add_n32_shift", "((cuda.threadIdx.x + 32 * n) >> 5) == 4", "block=256", (256, 1, 1)),
    ("mul2_shift", "((cuda.threadIdx.x * 2) >> 5) == 0", "block=256", (256, 1, 1)),
    ("mul32_shift", "((cuda.threadIdx.x * 32) >> 10) == 0", "block=256", (256, 1, 1)),
    ("lt_16", "cuda.threadIdx.x < 16", "block=256", (256, 1, 1)),
    ("le_31", "cuda.threadIdx.x <= 31", "block=256", (256, 1, 1)),
    ("le_32", "cuda.threadIdx.x <= 32", "block=256", (256, 1, 1)),
    ("ge_64", "cuda.threadIdx.x >= 64", "block=256", (256, 1, 1)),
    ("neg_shift", "((-cuda.threadIdx.x) >> 5) == -1", "block=256", (256, 1, 1)),
    ("not_shift", "((~cuda.threadIdx.x) >> 5) == -1", "block=256", (256, 1, 1)),
    ("neg_lt", "-cuda.threadIdx.x < -31", "block=256", (256, 1, 1)),
    ("c_minus", "(31 - cuda.threadIdx.x) >> 5 == 0", "block=256", (256, 1, 1)),
    ("mod64_lt32", "cuda.threadIdx.x % 64 < 32", "block=256", (256, 1, 1)),
    ("mod48_lt32", "cuda.threadIdx.x % 48 < 32", "block=256", (256, 1, 1)),
    ("int8_mod_lt", "np.int8(cuda.threadIdx.x + 16) < 0", "block=256", (256, 1, 1)),
    ("shl27_ashr27", "((np.int32(cuda.threadIdx.x) << 27) >> 27) < 0", "block=256", (256, 1, 1)),
    ("shl26_ashr31", "((np.int32(cuda.threadIdx.x) << 27) >> 31) == 0", "block=256", (256, 1, 1)),
    ("shl24_ashr29", "((np.int32(cuda.threadIdx.x) << 24) >> 29) == 0", "block=256", (256, 1, 1)),
    ("block33", "cuda.threadIdx.x // 32 == 1", "block=33", (33, 1, 1)),
    ("block1024", "cuda.threadIdx.x // 32 == 31", "block=1024", (1024, 1, 1)),
    ("maxthreads", "cuda.threadIdx.x // 32 == 0", "max_threads=256", (256, 1, 1)),
    ("laneid_mix", "(cuda.threadIdx.x // 32 + cuda.laneid) == 3", "block=256", (256, 1, 1)),
    (
        "ternary",
        "(cuda.threadIdx.x // 32 if n > 2 else cuda.threadIdx.x) == 1",
        "block=256",
        (256, 1, 1),
    ),
    (
        "ternary_tid",
        "(cuda.threadIdx.x // 32 if cuda.threadIdx.x > 2 else 0) == 1",
        "block=256",
        (256, 1, 1),
    ),
]
TWO = [
    ("y_32x1", "cuda.threadIdx.y == 0", "(32, 1, 1)", (32, 1, 1)),
    ("y_1x32", "cuda.threadIdx.y == 0", "(1, 32, 1)", (1, 32, 1)),
    ("x_1x32", "cuda.threadIdx.x // 32 == 0", "(1, 32, 1)", (1, 32, 1)),
    ("y_16x2", "cuda.threadIdx.y == 0", "(16, 2, 1)", (16, 2, 1)),
    ("x_96x3", "cuda.threadIdx.x // 32 == 1", "(96, 3, 1)", (96, 3, 1)),
    ("y_96x3", "cuda.threadIdx.y == 1", "(96, 3, 1)", (96, 3, 1)),
    ("x_33x2", "cuda.threadIdx.x // 32 == 1", "(33, 2, 1)", (33, 2, 1)),
    ("y_div_16x4", "cuda.threadIdx.y // 2 == 0", "(16, 4, 1)", (16, 4, 1)),
]

only = sys.argv[1:]
for name, cond, contract, block in ONE:
    if not only or name in only:
        try_one(name, kernel_1d(cond, contract), block)
for name, cond, contract, block in TWO:
    if not only or name in only:
        try_one(name, kernel_2d(cond, contract), block, ndim=2)
NARROW = [
    ("i32wrap_ashr", "(np.int32(cuda.threadIdx.x << 27) >> 27) < 0"),
    ("i64wrap_ashr", "((np.int64(cuda.threadIdx.x) << 59) >> 59) < 0"),
    ("i8_shl3", "np.int8(cuda.threadIdx.x << 3) < 0"),
    ("i8_shl3_shift", "(np.int8(cuda.threadIdx.x << 3) >> 5) == 0"),
    ("i8_shl3_div", "np.int8(cuda.threadIdx.x << 3) // 32 == 0"),
    ("i16_shl11", "np.int16(cuda.threadIdx.x << 11) < 0"),
    ("u8_shl3_lt", "np.uint8(cuda.threadIdx.x << 3) < 128"),
    ("i8_mul8", "np.int8(cuda.threadIdx.x * 8) < 0"),
    ("i32_shl27_lt", "np.int32(cuda.threadIdx.x << 27) < 0"),
    ("i32_shl27_div", "np.int32(cuda.threadIdx.x << 27) // 134217728 == 0"),
    ("i8_shl3_sext_shr", "(np.int64(np.int8(cuda.threadIdx.x << 3)) >> 7) == 0"),
]
for name, cond in NARROW:
    if not only or name in only:
        try_one(name, kernel_1d(cond), (256, 1, 1))
