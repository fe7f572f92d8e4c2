"""Reference numbers for src/stats/cuped.test.ts: CUPED (Deng et al. 2013) computed from per-unit
arrays with NumPy, without Verdict's sums: theta is the slope of an ordinary least-squares fit of
y on [1, x] over the pooled units (numpy.linalg.lstsq), and each variant's adjusted mean and
variance are the mean and sample variance (ddof=1) of the per-unit values y - theta (x - mean(x)).
The arrays are the same formulas the test writes out in TypeScript.
Run: python3 scripts/reference/cuped.py (offline only)."""
import numpy as np

def unit(variant, i):
    # x: pre-period value (0 for a third of the units: no pre-period activity); y: metric value.
    x = 0.0 if i % 3 == 0 else float((i * 37) % 23) + 0.5 * (i % 4)
    y = 0.8 * x + float((i * 53) % 17) + 1.5 * variant
    return x, y

sizes = [40, 45, 38]
xs = [np.array([unit(v, i)[0] for i in range(n)]) for v, n in enumerate(sizes)]
ys = [np.array([unit(v, i)[1] for i in range(n)]) for v, n in enumerate(sizes)]
X, Y = np.concatenate(xs), np.concatenate(ys)
design = np.column_stack([np.ones_like(X), X])
theta = np.linalg.lstsq(design, Y, rcond=None)[0][1]
print(f"theta {theta:.15g}")
reductions = []
for v in range(len(sizes)):
    adjusted = ys[v] - theta * (xs[v] - X.mean())
    unit_var = adjusted.var(ddof=1)
    reductions.append(1 - unit_var / ys[v].var(ddof=1))
    print(f"variant {v}: mean {adjusted.mean():.15g} unit_var {unit_var:.15g} var_of_mean {unit_var / sizes[v]:.15g} reduction {reductions[-1]:.15g}")
print(f"variance_reduction {np.mean(reductions):.15g}")
