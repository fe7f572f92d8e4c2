"""Reference numbers for src/stats/ratio.test.ts: delta-method variance of sum(x)/sum(y) from
per-unit arrays with numpy's sample covariance (ddof=1), i.e. without Verdict's sums.
Run: python3 scripts/reference/ratio_delta.py (offline only)."""
import numpy as np
x = np.array([12.0, 0.0, 30.5, 7.25, 0.0, 19.0, 4.0, 55.0])
y = np.array([2.0, 1.0, 3.0, 1.0, 0.0, 2.0, 1.0, 4.0])
n = len(x)
c = np.cov(x, y, ddof=1)
mx, my = x.mean(), y.mean()
var = (c[0, 0] / my**2 - 2 * mx * c[0, 1] / my**3 + mx**2 * c[1, 1] / my**4) / n
print(f"sums n={n} Sx={x.sum()} Sy={y.sum()} Sxx={(x*x).sum()} Syy={(y*y).sum()} Sxy={(x*y).sum()}")
print(f"ratio {x.sum()/y.sum():.12f} var {var:.12e}")
