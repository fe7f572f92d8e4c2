/** The plan's answer in words, about its first metric: what a person reads beside the chart. */
import { ruleName, unitsText } from '../../stats/rule-words.js';
import type { DecisionMethod } from '../../stats/types.js';
import type { PlanningPower } from './schemas.js';

const percent = (value: number) => `${+(value * 100).toPrecision(3)}%`;

/** Traffic as people say it: 4,100 rather than 4,096.3; small numbers to one decimal. */
function dailyText(units: number): string {
  if (units >= 1000) return unitsText(Math.round(units / 100) * 100);
  return units >= 10 ? unitsText(Math.round(units)) : `${Math.round(units * 10) / 10}`;
}

/**
 * "About 16 days at 4,100 new units a day to detect a 2% lift in Purchase conversion with 80%
 * power (the Bayesian rule (chance of being best))." In duration mode: the MDE reachable then.
 */
export function planSummary(plan: Omit<PlanningPower, 'summary'>, durationDays: number | null): string {
  const metric = plan.metrics[0];
  if (!metric) return '';
  const traffic = `${dailyText(plan.daily_units.value)} new units a day`;
  const power = percent(plan.power);
  const rule = ruleName(plan.decision_rule.method as DecisionMethod);
  if (durationDays !== null) {
    if (metric.minimum_detectable_effect === null)
      return `In ${durationDays} days at ${traffic}, no lift in ${metric.metric_name} up to 10,000% is detectable with ${power} power (${rule}).`;
    return `In ${durationDays} days at ${traffic}, ${rule} detects a ${percent(metric.minimum_detectable_effect)} lift in ${metric.metric_name} with ${power} power.`;
  }
  const lift = `a ${percent(plan.decision_rule.minimum_detectable_effect)} lift in ${metric.metric_name}`;
  if (metric.days_needed === null || metric.units_per_variant === null) {
    return `${rule.charAt(0).toUpperCase()}${rule.slice(1)} needs more than a billion units per variant to detect ${lift} with ${power} power.`;
  }
  const days = metric.days_needed === 1 ? 'about 1 day' : `about ${unitsText(metric.days_needed)} days`;
  return `${days.charAt(0).toUpperCase()}${days.slice(1)} at ${traffic} to detect ${lift} with ${power} power: ${unitsText(metric.units_per_variant)} units per variant with ${rule}.`;
}
