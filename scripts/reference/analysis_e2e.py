#!/usr/bin/env python3
"""Expected snapshot of the end-to-end analysis test (test/analysis/end-to-end.test.ts).

An independent computation with SciPy (tested with scipy 1.17) of the numbers Verdict's
analysis must produce for the data described in test/analysis/scenario.ts. It does not share
code with Verdict: per-unit values come from replaying the scenario in Python, prob_best and the
expected loss from numerical integration (scipy.integrate.quad) rather than the closed forms
Verdict uses, quantiles from scipy.stats, SRM from scipy.stats.chisquare.

Run:  python3 scripts/reference/analysis_e2e.py
and paste its output into EXPECTED in test/analysis/end-to-end.test.ts.
"""
import json
import math

from scipy import integrate, stats

MINUTE = 60_000
HOUR = 60 * MINUTE
DAY = 24 * HOUR
UNITS = {"control": 200, "treatment": 210}
WINDOWS = {"purchased": 7 * DAY, "revenue": 7 * DAY, "load_time": 1 * DAY, "pageviews": 7 * DAY}


def purchases(variant, i):
    converts = i % 10 == 0 if variant == "control" else i % 5 == 0
    events = []
    if converts:
        for k in range(1 + i % 3):
            total = 10 + (i % 7) * 5 + k * 0.25
            if k == 0 and i % 20 == 0:
                total = str(total)
            if k == 0 and i % 30 == 10:
                total = True
            events.append(("purchase", (k + 1) * HOUR, total))
    if i % 4 == 1:
        events.append(("purchase", 8 * DAY, 50))
    if i % 6 == 2:
        events.append(("purchase", -HOUR, 40))
    if i % 25 == 3:
        events.append(("purchase", 9 * DAY, 70))
    return events


def page_loads(variant, i):
    if i % 2 != 0:
        return []
    events = []
    for k in range(1 + i % 4):
        load = 100 + (i % 13) * 10 + k * 3 - (5 if variant == "treatment" else 0)
        events.append(("page_load", 30 * MINUTE + k * MINUTE, load))
    events.append(("page_load", 2 * DAY, 999))
    return events


def is_number(value):
    # JSON numbers only: strings and booleans are not (bool is an int subclass in Python).
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def unit_values(variant, i):
    """Per-unit value of each metric; None means 'no value' (mean metric without events)."""
    events = purchases(variant, i) + page_loads(variant, i)
    def within(key, window):
        return [value for (k, offset, value) in events if k == key and 0 <= offset < window]
    bought = within("purchase", WINDOWS["purchased"])
    totals = [v for v in within("purchase", WINDOWS["revenue"]) if is_number(v)]
    loads = [v for v in within("page_load", WINDOWS["load_time"]) if is_number(v)]
    views = within("page_load", WINDOWS["pageviews"])
    return {
        "purchased": (1 if bought else 0, bool(bought)),
        "revenue": (float(sum(totals)), bool(totals)),
        "load_time": (sum(loads) / len(loads) if loads else None, bool(loads)),
        "pageviews": (len(views), bool(views)),
    }


def beta_arm(units, conversions):
    a, b = 1 + conversions, 1 + units - conversions
    dist = stats.beta(a, b)
    return dist, {
        "sample_size": units,
        "conversions": conversions,
        "observed_rate": conversions / units,
        "mean": dist.mean(),
        "ci": [dist.ppf(0.025), dist.ppf(0.975)],
    }


def prob_greater(x, y):
    """P(Y > X) for two continuous distributions with densities, by integration over x."""
    lo, hi = min(x.ppf(1e-15), y.ppf(1e-15)), max(x.isf(1e-15), y.isf(1e-15))
    value, _ = integrate.quad(lambda t: x.pdf(t) * y.sf(t), lo, hi, epsabs=1e-13, epsrel=1e-12, limit=500)
    return value


def expected_loss(mine, other):
    """E[max(other - mine, 0)] by double integration: over x of mine, inner over y > x."""
    lo, hi = min(mine.ppf(1e-15), other.ppf(1e-15)), max(mine.isf(1e-15), other.isf(1e-15))
    def inner(x):
        value, _ = integrate.quad(lambda y: (y - x) * other.pdf(y), x, hi, epsabs=1e-14, epsrel=1e-12, limit=500)
        return value
    value, _ = integrate.quad(lambda x: mine.pdf(x) * inner(x), lo, hi, epsabs=1e-14, epsrel=1e-11, limit=500)
    return value


def normal_arm(values, conversions):
    n = len(values)
    mean = sum(values) / n
    variance = sum((v - mean) ** 2 for v in values) / (n - 1)
    dist = stats.norm(mean, math.sqrt(variance / n))
    return dist, {
        "sample_size": n,
        "conversions": conversions,
        "observed_rate": mean,
        "mean": mean,
        "ci": [dist.ppf(0.025), dist.ppf(0.975)],
    }


def compare(arms):
    (c_dist, c), (t_dist, t) = arms
    c["prob_best"] = prob_greater(t_dist, c_dist)
    t["prob_best"] = prob_greater(c_dist, t_dist)
    c["expected_loss"] = expected_loss(c_dist, t_dist)
    t["expected_loss"] = expected_loss(t_dist, c_dist)
    return {"control": c, "treatment": t}


def metric(values_by_variant, key):
    arms = []
    for variant in ("control", "treatment"):
        values = [v[key] for v in values_by_variant[variant]]
        conversions = sum(1 for (_, has) in values if has)
        if key == "purchased":
            arms.append(beta_arm(len(values), conversions))
        elif key == "load_time":
            arms.append(normal_arm([value for (value, has) in values if has], conversions))
        else:
            arms.append(normal_arm([value for (value, _) in values], conversions))
    return compare(arms)


def main():
    values = {variant: [unit_values(variant, i) for i in range(n)] for variant, n in UNITS.items()}
    late = sum(1 for variant, n in UNITS.items() for i in range(n) for (k, offset, _) in purchases(variant, i) if offset == 9 * DAY)
    srm = stats.chisquare([UNITS["control"], UNITS["treatment"]], f_exp=[sum(UNITS.values()) / 2] * 2)
    expected = {
        "metrics": {key: metric(values, key) for key in ("purchased", "revenue", "load_time", "pageviews")},
        "srm_chi_squared_p": srm.pvalue,
        "late_event_count": late,
    }
    print(json.dumps(expected, indent=2))


if __name__ == "__main__":
    main()
