"""Reference numbers for src/stats/quantile.test.ts: seeded clustered data (units with several
events whose values share a unit effect), numpy.quantile (default linear interpolation), the
order-statistic interval of Deng, Knoblich and Lu (KDD 2018) with the delta method over units at
the event level and sqrt(q (1 - q) / n) at the unit level, and, independently, bootstrap standard
errors (units resampled with replacement, seeded) of each quantile and of the relative difference.
Run: python3 scripts/reference/quantile_delta.py > src/stats/quantile.reference.json (offline only)."""
import json
import numpy as np

Z = 1.959963984540054
rng = np.random.default_rng(58)


def arm(units, lift):
    data = []
    for _ in range(units):
        effect = rng.normal(0.0, 0.5)
        events = 1 + rng.poisson(4)
        values = np.round(np.exp(5.0 + lift + effect + rng.normal(0.0, 0.6, events)), 2)
        data.append([float(v) for v in values])
    return data


def estimate(units, q, level):
    if level == "event":
        values = np.concatenate([np.array(u) for u in units])
    else:
        values = np.array([sum(u) for u in units])
    value = np.quantile(values, q)
    if level == "event":
        n_i = np.array([len(u) for u in units], dtype=float)
        s_i = np.array([np.sum(np.array(u) <= value) for u in units], dtype=float)
        k = len(units)
        c = np.cov(s_i, n_i, ddof=1)
        r = s_i.sum() / n_i.sum()
        var = (c[0, 0] - 2 * r * c[0, 1] + r**2 * c[1, 1]) / (k * n_i.mean() ** 2)
        sigma = np.sqrt(var)
    else:
        sigma = np.sqrt(q * (1 - q) / len(values))
    lower = np.quantile(values, max(0.0, q - Z * sigma))
    upper = np.quantile(values, min(1.0, q + Z * sigma))
    return {"value": float(value), "sigma": float(sigma), "lower": float(lower), "upper": float(upper), "se": float((upper - lower) / (2 * Z))}


def bootstrap(control, treatment, q, level, draws=4000):
    boot = np.random.default_rng(2018)
    def resampled(units):
        picks = boot.integers(0, len(units), len(units))
        chosen = [units[i] for i in picks]
        if level == "event":
            return np.quantile(np.concatenate([np.array(u) for u in chosen]), q)
        return np.quantile(np.array([sum(u) for u in chosen]), q)
    c = np.empty(draws)
    t = np.empty(draws)
    for b in range(draws):
        c[b] = resampled(control)
        t[b] = resampled(treatment)
    return {"se_control": float(c.std(ddof=1)), "se_treatment": float(t.std(ddof=1)), "se_relative": float((t / c - 1).std(ddof=1))}


control = arm(200, 0.0)
treatment = arm(200, 0.15)
cases = []
for q, level in [(0.5, "event"), (0.9, "event"), (0.9, "unit"), (0.5, "unit")]:
    c = estimate(control, q, level)
    t = estimate(treatment, q, level)
    rel = t["value"] / c["value"] - 1
    rel_se = np.sqrt(t["se"] ** 2 / c["value"] ** 2 + c["se"] ** 2 * t["value"] ** 2 / c["value"] ** 4)
    cases.append({"q": q, "level": level, "control": c, "treatment": t, "relative": float(rel), "relative_se": float(rel_se), "bootstrap": bootstrap(control, treatment, q, level)})
print(json.dumps({"source": "scripts/reference/quantile_delta.py (numpy " + np.__version__ + ")", "control": control, "treatment": treatment, "cases": cases}))
