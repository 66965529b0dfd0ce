"""CuPy: a least-squares fit on the GPU, the NumPy-style array code of scientific repositories."""

import cupy as cp

rng = cp.random.default_rng(0)
a = rng.standard_normal((512, 64), dtype=cp.float32)
truth = cp.linspace(-1, 1, 64, dtype=cp.float32)
b = a @ truth
solution, *_ = cp.linalg.lstsq(a, b, rcond=None)
print("error", float(cp.abs(solution - truth).max()))
print("TRAIN_OK")
