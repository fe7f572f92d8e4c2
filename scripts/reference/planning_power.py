"""Reference numbers for src/stats/planning.test.ts, computed with SciPy (scipy.stats.norm for the
normal quantiles and CDF, scipy.optimize.brentq to solve power(n) = 0.8 and power(mde) = 0.8),
independently of Verdict's TypeScript. Each case states its formula.
Run: python3 scripts/reference/planning_power.py (offline only)."""
import math
from scipy.stats import norm
from scipy.optimize import brentq

z = norm.ppf

# 1. Posterior rule (one-sided z at Phi^-1(0.995)), non-binary metric mean 10, variance 25,
#    MDE 5%, equal weights: n = (z_0.995 + z_0.8)^2 * 2 sigma^2 / delta^2.
delta = 0.05 * 10
n1 = (z(0.995) + z(0.8)) ** 2 * 2 * 25 / delta**2
print(f"case1 posterior equal n = {n1!r} -> ceil {math.ceil(n1)}")

# 2. Posterior rule, binary 10% rate, MDE 10%, control 20% / treatment 80%: the control is the
#    smallest arm with n units, the treatment 4 n: n = (z_t + z_p)^2 (s_c^2 + s_t^2 / 4) / delta^2.
p, pt = 0.1, 0.11
n2 = (z(0.995) + z(0.8)) ** 2 * (p * (1 - p) + pt * (1 - pt) / 4) / (0.01**2)
print(f"case2 posterior 20/80 n = {n2!r} -> ceil {math.ceil(n2)}")

# 3. Posterior rule, reachable MDE at n = 10,000 per arm, mean 10, variance 25, equal weights:
#    mde = (z_t + z_p) sqrt(2 sigma^2 / n) / mu.
mde3 = (z(0.995) + z(0.8)) * math.sqrt(2 * 25 / 10000) / 10
print(f"case3 posterior reachable mde = {mde3!r}")

# 4. e-value rule, three variants (alpha 0.005 split over two treatments), N* = 2 * 20,000, equal
#    weights, mean 10 variance 25, MDE 2%. Normal-mixture boundary (Howard et al. 2021, eq. 14):
#    rho^2 = (-2 ln a + ln(-2 ln a + 1)) / N*, boundary(N) = sqrt(2 (N rho^2 + 1) / rho^2 (ln(1/a) + ln(N rho^2 + 1) / 2)),
#    power(n) = Phi(delta / sqrt(2 sigma^2 / n) - boundary(2 n) / sqrt(2 n)).
a = 0.005 / 2
rho2 = (-2 * math.log(a) + math.log(-2 * math.log(a) + 1)) / 40000
def evalue_power(n, delta=0.2, var=25.0):
    N = 2 * n
    boundary = math.sqrt(2 * (N * rho2 + 1) / rho2 * (-math.log(a) + 0.5 * math.log(N * rho2 + 1)))
    return norm.cdf(delta / math.sqrt(2 * var / n) - boundary / math.sqrt(N))
n4 = brentq(lambda n: evalue_power(n) - 0.8, 10, 1e8)
print(f"case4 evalue 3 arms n = {n4!r} -> ceil {math.ceil(n4)}")

# 5. mSPRT, two arms 30/70 (control 30), binary 5% rate, MDE 20%, alpha 0.005, tau = delta:
#    V = s_c^2 / n_c + s_t^2 / n_t, r = tau^2 / V, c = sqrt(2 (1 + r) / r (ln(1/a) + ln(1 + r) / 2)),
#    power = Phi(delta / sqrt(V) - c); n the units of the control (the smallest arm), n_t = 7 n / 3.
p, pt = 0.05, 0.06
d5 = 0.01
def msprt_power(n):
    V = p * (1 - p) / n + pt * (1 - pt) / (n * 7 / 3)
    r = d5**2 / V
    c = math.sqrt(2 * (1 + r) / r * (-math.log(0.005) + 0.5 * math.log1p(r)))
    return norm.cdf(d5 / math.sqrt(V) - c)
n5 = brentq(lambda n: msprt_power(n) - 0.8, 10, 1e9)
print(f"case5 msprt 30/70 n = {n5!r} -> ceil {math.ceil(n5)}")
