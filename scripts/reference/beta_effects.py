"""Reference numbers for src/stats/effect.test.ts (binary effects): exact 2.5%/97.5% quantiles of
T - C and T / C - 1 for independent Beta posteriors, by SciPy's adaptive quadrature (quad) and
brentq root finding, independent of Verdict's Gauss-Legendre code. Run: python3 scripts/reference/beta_effects.py
Offline only; never a runtime dependency."""
from scipy import stats, integrate, optimize

CASES = {
    # name: (control conversions, control units, treatment conversions, treatment units)
    "posthog": (267, 2298, 286, 2300),
    "small": (3, 20, 9, 25),
    "large": (10000, 100000, 10400, 100000),
    "zero_control": (0, 50, 5, 50),
    "unequal_widths": (50, 500, 5000, 50000),
    # test/analysis/effects.test.ts: the primary metric and the lower-is-better guardrail.
    "e2e_converted": (12, 60, 30, 60),
    "e2e_errors": (6, 60, 30, 60),
}

def quad(f, lo, hi):
    return integrate.quad(f, lo, hi, epsabs=1e-14, epsrel=1e-12, limit=1000)[0]

for name, (cc, cn, tc, tn) in CASES.items():
    c = stats.beta(1 + cc, 1 + cn - cc)
    t = stats.beta(1 + tc, 1 + tn - tc)
    lo, hi = c.ppf(1e-15), c.isf(1e-15)
    diff_cdf = lambda d: quad(lambda x: c.pdf(x) * t.cdf(x + d), lo, hi)
    ratio_cdf = lambda r: quad(lambda x: c.pdf(x) * t.cdf(r * x), lo, hi)
    dq = [optimize.brentq(lambda d: diff_cdf(d) - p, -1, 1, xtol=1e-14) for p in (0.025, 0.975)]
    rq = [optimize.brentq(lambda r: ratio_cdf(r) - p, 1e-9, 1e4, xtol=1e-14) - 1 for p in (0.025, 0.975)]
    above = 1 - diff_cdf(0)
    print(f"{name}: diff [{dq[0]:.10f}, {dq[1]:.10f}] relative [{rq[0]:.10f}, {rq[1]:.10f}] P(T>C) {above:.10f}")
