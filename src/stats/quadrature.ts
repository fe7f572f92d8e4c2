/**
 * Composite Gauss-Legendre quadrature, used to integrate one posterior's density against the
 * other's CDF (the distribution of a difference or a ratio of two independent Betas).
 *
 * Why Gauss-Legendre: the integrands are smooth, and an n-point rule is exact for polynomials of
 * degree 2n - 1, so 32 panels of 16 points reach about 1e-10 on them at a few hundred CDF calls.
 * The nodes and weights are computed once, by Newton's method on the Legendre polynomial
 * (Golub-Welsch would do as well); no table is copied.
 */

export const GAUSS_POINTS = 16;

interface Rule {
  nodes: Float64Array;
  weights: Float64Array;
}

/** P_n(x) and P_n'(x) by the three-term recurrence. */
function legendre(n: number, x: number): { value: number; derivative: number } {
  let previous = 1;
  let current = x;
  for (let k = 2; k <= n; k += 1) {
    const next = ((2 * k - 1) * x * current - (k - 1) * previous) / k;
    previous = current;
    current = next;
  }
  return { value: current, derivative: (n * (x * current - previous)) / (x * x - 1) };
}

/** Nodes and weights of the n-point rule on [-1, 1]. */
function gaussLegendre(n: number): Rule {
  const nodes = new Float64Array(n);
  const weights = new Float64Array(n);
  for (let i = 0; i < n; i += 1) {
    // Tricomi's initial guess for the i-th root, then Newton to machine precision.
    let x = Math.cos((Math.PI * (i + 0.75)) / (n + 0.5));
    for (let step = 0; step < 100; step += 1) {
      const { value, derivative } = legendre(n, x);
      const delta = value / derivative;
      x -= delta;
      if (Math.abs(delta) < 1e-15) break;
    }
    const { derivative } = legendre(n, x);
    nodes[i] = x;
    weights[i] = 2 / ((1 - x * x) * derivative * derivative);
  }
  return { nodes, weights };
}

const RULE = gaussLegendre(GAUSS_POINTS);

/**
 * Abscissas and weights of the 16-point rule on each panel between consecutive `breaks`
 * (increasing). Callers put the breaks at quantiles of the density they integrate against, so
 * that the nodes crowd where its mass is.
 */
export function compositeRule(breaks: readonly number[]): Rule {
  const panels = breaks.length - 1;
  const count = panels * GAUSS_POINTS;
  const nodes = new Float64Array(count);
  const weights = new Float64Array(count);
  for (let panel = 0; panel < panels; panel += 1) {
    const width = (breaks[panel + 1] as number) - (breaks[panel] as number);
    const middle = (breaks[panel] as number) + 0.5 * width;
    for (let i = 0; i < GAUSS_POINTS; i += 1) {
      nodes[panel * GAUSS_POINTS + i] = middle + 0.5 * width * (RULE.nodes[i] as number);
      weights[panel * GAUSS_POINTS + i] = 0.5 * width * (RULE.weights[i] as number);
    }
  }
  return { nodes, weights };
}
