// The Python script of the notebook export (docs/ui.md "Exports"). It reads the export's JSON and
// recomputes every posterior interval and effect of the snapshot, each metric's breakdown slices
// too, with SciPy, by the formulas of docs/statistics.md, then prints each number beside Verdict's
// and exits 1 when any differs by more than the tolerance. Paste it into a notebook cell, or run: python3 verdict_results.py export.json
export const NOTEBOOK_SCRIPT = String.raw`"""Recomputes a Verdict snapshot from its per-variant sufficient statistics (docs/statistics.md)."""
import json, math, sys
from scipy import stats, integrate, optimize

Z = 1.959964
TOLERANCE = 1e-6

def quad(f, lo, hi):
    return integrate.quad(f, lo, hi, epsabs=1e-14, epsrel=1e-12, limit=1000)[0]

def beta_posterior(v):
    return stats.beta(1 + v["conversions"], 1 + v["n"] - v["conversions"])

def posterior(metric, v):
    if metric["model"] == "beta":
        b = beta_posterior(v)
        return b.mean(), [b.ppf(0.025), b.ppf(0.975)]
    if v["variance_of_mean"] is None:
        return v["mean"], None
    se = math.sqrt(v["variance_of_mean"])
    return v["mean"], [v["mean"] - Z * se, v["mean"] + Z * se]

def beta_effect(c_stats, t_stats, higher_is_better):
    c, t = beta_posterior(c_stats), beta_posterior(t_stats)
    lo, hi = c.ppf(1e-15), c.isf(1e-15)
    diff_cdf = lambda d: quad(lambda x: c.pdf(x) * t.cdf(x + d), lo, hi)
    ratio_cdf = lambda r: quad(lambda x: c.pdf(x) * t.cdf(r * x), lo, hi)
    absolute = [optimize.brentq(lambda d: diff_cdf(d) - p, -1, 1, xtol=1e-14) for p in (0.025, 0.975)]
    relative = [optimize.brentq(lambda r: ratio_cdf(r) - p, 1e-9, 1e4, xtol=1e-14) - 1 for p in (0.025, 0.975)]
    a_c, b_c = c.args
    relative_mean = t.mean() * (a_c + b_c - 1) / (a_c - 1) - 1 if a_c > 1 else None
    above = 1 - diff_cdf(0)
    return {"absolute_mean": t.mean() - c.mean(), "absolute": absolute, "relative_mean": relative_mean,
            "relative": relative, "chance": above if higher_is_better else 1 - above}

def normal_effect(c, t, higher_is_better):
    m_c, v_c, m_t, v_t = c["mean"], c["variance_of_mean"], t["mean"], t["variance_of_mean"]
    sd = math.sqrt(v_t + v_c)
    diff = m_t - m_c
    out = {"absolute_mean": diff, "absolute": [diff - Z * sd, diff + Z * sd], "relative_mean": None, "relative": None,
           "chance": stats.norm.cdf(diff / sd) if sd > 0 else (1.0 if diff > 0 else 0.0)}
    if not higher_is_better:
        out["chance"] = 1 - out["chance"]
    if m_c != 0:
        rel = diff / m_c
        rel_sd = math.sqrt(v_t / m_c ** 2 + v_c * m_t ** 2 / m_c ** 4)
        out["relative_mean"], out["relative"] = rel, [rel - Z * rel_sd, rel + Z * rel_sd]
    return out

def close(ours, theirs):
    if ours is None or theirs is None:
        return ours is None and theirs is None
    return abs(ours - theirs) <= TOLERANCE * max(1.0, abs(theirs))

def compare(label, ours, theirs, failures):
    pairs = list(zip(ours, theirs)) if isinstance(theirs, list) else [(ours, theirs)]
    ok = all(close(o, t) for o, t in pairs)
    print(f"{'ok ' if ok else 'BAD'} {label}: recomputed {ours} verdict {theirs}")
    if not ok:
        failures.append(label)

def check_variants(metric, variants, label, failures):
    control = next(v for v in variants if v["is_control"])
    for v in variants:
        name = f"{label} / {v['variant_key']}"
        mean, interval = posterior(metric, v)
        compare(f"{name} posterior mean", mean, v["reported"]["posterior_mean"], failures)
        if v["reported"]["posterior_interval"] is not None:
            compare(f"{name} posterior 95% interval", interval, v["reported"]["posterior_interval"], failures)
        effect = v["reported"]["effect"]
        if v["is_control"] or effect is None:
            continue
        ours = (beta_effect if metric["model"] == "beta" else normal_effect)(control, v, metric["higher_is_better"])
        compare(f"{name} absolute effect", ours["absolute_mean"], effect["absolute"]["mean"], failures)
        compare(f"{name} absolute 95% interval", ours["absolute"], effect["absolute"]["credible_interval_95"], failures)
        compare(f"{name} relative effect", ours["relative_mean"], effect["relative"]["mean"], failures)
        if effect["relative"]["credible_interval_95"] is not None:
            compare(f"{name} relative 95% interval", ours["relative"], effect["relative"]["credible_interval_95"], failures)
        compare(f"{name} chance to beat control", ours["chance"], effect["chance_to_beat_control"], failures)

def check(export):
    failures = []
    for metric in export["metrics"]:
        check_variants(metric, metric["variants"], metric["key"], failures)
        for piece in metric.get("slices", []):
            if any(v["is_control"] for v in piece["variants"]):
                check_variants(metric, piece["variants"], f"{metric['key']} {piece['dimension']}={piece['label']}", failures)
    return failures

if __name__ == "__main__":
    with open(sys.argv[1]) as handle:
        failures = check(json.load(handle))
    print("all numbers recomputed" if not failures else f"{len(failures)} numbers differ")
    sys.exit(1 if failures else 0)
`;
