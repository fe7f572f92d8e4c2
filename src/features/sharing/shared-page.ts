import type { AnalysisSnapshot, VariantPosterior } from '../analysis/read.js';

// What a share link shows a browser: the same answer as its JSON, as one self-contained page (no
// script, no request to anything: the Content-Security-Policy says so), every text escaped.

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] as string);
}

function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${(value * 100).toFixed(1)}%`;
}

function interval(pair: readonly [number, number] | null | undefined, format: (value: number) => string): string {
  return pair ? `${format(pair[0])} to ${format(pair[1])}` : '—';
}

function variantRow(variant: VariantPosterior): string {
  const effect = variant.effect;
  const cells = [
    escape(variant.variant_key) + (variant.is_control ? ' (control)' : ''),
    String(variant.sample_size),
    variant.posterior.mean === null ? '—' : variant.posterior.mean.toPrecision(4),
    effect ? percent(effect.relative.mean) : '—',
    effect ? interval(effect.relative.credible_interval_95, (value) => percent(value)) : '—',
    effect ? percent(effect.chance_to_beat_control) : '—',
  ];
  return `<tr>${cells.map((cell) => `<td>${cell}</td>`).join('')}</tr>`;
}

export const SHARED_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function sharedPage(experiment: { name: string; hypothesis: string; status: string }, results: AnalysisSnapshot, expiresAt: string): string {
  const metric = results.primary_metric ? escape(results.primary_metric.name) : 'no primary metric';
  const recommendation = results.decision.recommendation;
  const reasons = recommendation.reasons.map((reason) => `<li>${escape(reason.message)}</li>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escape(experiment.name)}: results</title>
<style>body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;line-height:1.5}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ccc;padding:.3rem .5rem;text-align:left}.muted{color:#555}</style>
</head><body>
<h1>${escape(experiment.name)}</h1>
<p>${escape(experiment.hypothesis)}</p>
<p class="muted">Status ${escape(experiment.status)}. Results computed ${escape(results.computed_at)}; a read-only link, valid until ${escape(expiresAt)}.</p>
<h2>Recommendation: ${escape(recommendation.action.replace(/_/g, ' '))}</h2>
<ul>${reasons}</ul>
<h2>${metric}</h2>
<table><thead><tr><th>Variant</th><th>Units</th><th>Mean</th><th>Lift</th><th>Lift, 95% interval</th><th>Chance to beat control</th></tr></thead>
<tbody>${results.per_variant.map(variantRow).join('')}</tbody></table>
${results.srm_warning ? '<p><strong>Sample-ratio mismatch:</strong> the split does not match the weights; distrust these results.</p>' : ''}
</body></html>
`;
}
