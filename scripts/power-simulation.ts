/**
 * Seeded power simulation of the decision rules (docs/statistics.md section 9). Not a test: it
 * draws hundreds of millions of Bernoulli units and takes minutes.
 *
 *   npx tsx scripts/power-simulation.ts [--reps 400] [--check-reps 500] [--plan-reps 500] [--seed 1] [--look-every 5000] [--part all|plans]
 *
 * Part 1: the default rule settings (posterior_threshold 0.995, so alpha 0.005 for the
 * always-valid rules; minimum_detectable_effect 0.02; min_sample_per_variant 20,000) against a
 * true +10% relative lift on a 5% conversion rate (5% -> 5.5%), two arms. For each rule: the
 * share of replications declaring the treatment the winner at one look at n units per arm, and at
 * any of the looks made every --look-every units per arm (5,000) up to n (a team watching every snapshot).
 * Part 2: checks estimateUnitsPerVariant (src/stats/power.ts): at the estimated n, with a true lift
 * equal to the MDE, the single-look power should be about 80%.
 * Part 3: the same check of the plans of src/stats/planning.ts with unequal weights and three
 * variants (one treatment showing the MDE, the other none): the always-valid rules split alpha
 * over the two treatments, as they do at decision time.
 */
import mt19937 from '@stdlib/random-base-mt19937';
import { parseArgs } from 'node:util';
import { binaryDecisionVariant, decide, resolveDecisionRule } from '../src/stats/decision.js';
import { betaPosterior, probGreaterBeta } from '../src/stats/beta.js';
import { binaryBaseline, estimateUnitsPerVariant } from '../src/stats/power.js';
import { unitsNeeded } from '../src/stats/planning.js';
import type { DecisionMethod, DecisionRuleSettings, DecisionVariant } from '../src/stats/types.js';

const { values: args } = parseArgs({
  options: {
    reps: { type: 'string', default: '400' },
    'check-reps': { type: 'string', default: '500' },
    'plan-reps': { type: 'string', default: '500' },
    part: { type: 'string', default: 'all' },
    seed: { type: 'string', default: '1' },
    'look-every': { type: 'string', default: '5000' },
  },
});
const METHODS: DecisionMethod[] = ['bayesian.posterior_threshold', 'bayesian.always_valid_evalue', 'frequentist.sequential_msprt'];

/** Draws arms of Bernoulli units from one MT19937 stream. */
class Units {
  readonly #random: () => number;
  constructor(seed: number) {
    this.#random = mt19937.factory({ seed });
  }
  /** Conversions among `units` new units at `rate`. */
  conversions(units: number, rate: number): number {
    const threshold = rate * 4294967296;
    let count = 0;
    for (let i = 0; i < units; i++) if (this.#random() < threshold) count++;
    return count;
  }
}

/** The rule's decision on two arms with these counts: is the treatment the winner? */
function treatmentWins(rule: DecisionRuleSettings, units: number, conversions: [number, number]): boolean {
  let variants: DecisionVariant[] = [
    binaryDecisionVariant('control', true, units, conversions[0], null),
    binaryDecisionVariant('treatment', false, units, conversions[1], null),
  ];
  // Below min_sample_per_variant the posterior rule is undecided whatever prob_best is: skip the exact sum.
  if (rule.method === 'bayesian.posterior_threshold' && units >= rule.min_sample_per_variant) {
    const treatmentBest = probGreaterBeta(betaPosterior(conversions[0], units), betaPosterior(conversions[1], units));
    variants = variants.map((v, i) => ({ ...v, prob_best: treatmentBest === null ? null : i === 1 ? treatmentBest : 1 - treatmentBest }));
  }
  const decision = decide({ variants, rule, days_elapsed: 0 });
  return decision.verdict === 'winner' && decision.variant_key === 'treatment';
}

interface HorizonPower {
  units: number;
  singleLook: number[];
  anyLook: number[];
}

function simulateDefaultRules(reps: number, seed: number, lookEvery: number): HorizonPower[] {
  const rules = METHODS.map((method) => resolveDecisionRule({ method }));
  const rates: [number, number] = [0.05, 0.055];
  const horizons = [20_000, 50_000, 100_000, 200_000];
  const results = horizons.map((units) => ({ units, singleLook: rules.map(() => 0), anyLook: rules.map(() => 0) }));
  const draw = new Units(seed);
  for (let rep = 0; rep < reps; rep++) {
    const conversions: [number, number] = [0, 0];
    const wonAt: (number | null)[] = rules.map(() => null);
    for (let units = lookEvery; units <= (horizons.at(-1) as number); units += lookEvery) {
      conversions[0] += draw.conversions(lookEvery, rates[0]);
      conversions[1] += draw.conversions(lookEvery, rates[1]);
      const horizon = results.find((result) => result.units === units);
      rules.forEach((rule, r) => {
        const wins = treatmentWins(rule, units, conversions);
        if (wins && wonAt[r] === null) wonAt[r] = units;
        if (wins && horizon) (horizon.singleLook[r] as number)++;
      });
    }
    for (const result of results) {
      wonAt.forEach((at, r) => {
        if (at !== null && at <= result.units) (result.anyLook[r] as number)++;
      });
    }
  }
  return results.map((result) => ({ ...result, singleLook: result.singleLook.map((c) => c / reps), anyLook: result.anyLook.map((c) => c / reps) }));
}

interface EstimateCheck {
  method: DecisionMethod;
  rate: number;
  mde: number;
  estimate: number;
  simulatedPower: number;
}

function checkEstimates(reps: number, seed: number): EstimateCheck[] {
  const cases: { rate: number; mde: number }[] = [
    { rate: 0.05, mde: 0.2 },
    { rate: 0.1, mde: 0.1 },
    { rate: 0.5, mde: 0.05 },
  ];
  const draw = new Units(seed + 1000);
  const checks: EstimateCheck[] = [];
  for (const { rate, mde } of cases) {
    for (const method of METHODS) {
      // The posterior rule cannot decide below min_sample_per_variant: lower it so that the look
      // at the estimate counts. (For the e-value it sets N*, so it keeps its default there.)
      const minSample = method === 'bayesian.posterior_threshold' ? { min_sample_per_variant: 1 } : {};
      const rule = resolveDecisionRule({ method, minimum_detectable_effect: mde, ...minSample });
      const units = estimateUnitsPerVariant({ rule, variantCount: 2, baseline: binaryBaseline(rate, mde) }) as number;
      let wins = 0;
      for (let rep = 0; rep < reps; rep++) {
        const conversions: [number, number] = [draw.conversions(units, rate), draw.conversions(units, rate * (1 + mde))];
        if (treatmentWins(rule, units, conversions)) wins++;
      }
      checks.push({ method, rate, mde, estimate: units, simulatedPower: wins / reps });
    }
  }
  return checks;
}

interface PlanCase {
  method: DecisionMethod;
  weights: number[];
  rate: number;
  mde: number;
}

/** The rule's decision on arms with these counts (the first the control): is arm 1, the one with the lift, the winner? */
function liftedArmWins(rule: DecisionRuleSettings, units: number[], conversions: number[]): boolean {
  if (units.length === 2 && rule.method === 'bayesian.posterior_threshold') {
    const best = probGreaterBeta(betaPosterior(conversions[0] as number, units[0] as number), betaPosterior(conversions[1] as number, units[1] as number));
    const variants = units.map((n, i) =>
      binaryDecisionVariant(i === 0 ? 'control' : `t${i}`, i === 0, n, conversions[i] as number, best === null ? null : i === 1 ? best : 1 - best),
    );
    const decision = decide({ variants, rule, days_elapsed: 0 });
    return decision.verdict === 'winner' && decision.variant_key === 't1';
  }
  const variants = units.map((n, i) => binaryDecisionVariant(i === 0 ? 'control' : `t${i}`, i === 0, n, conversions[i] as number, null));
  const decision = decide({ variants, rule, days_elapsed: 0 });
  return decision.verdict === 'winner' && decision.variant_key === 't1';
}

function checkPlans(reps: number, seed: number): Array<PlanCase & { units: number[]; simulatedPower: number }> {
  const cases: PlanCase[] = [
    { method: 'bayesian.posterior_threshold', weights: [20, 80], rate: 0.1, mde: 0.1 },
    { method: 'frequentist.sequential_msprt', weights: [30, 70], rate: 0.05, mde: 0.2 },
    { method: 'bayesian.always_valid_evalue', weights: [30, 70], rate: 0.05, mde: 0.2 },
    { method: 'frequentist.sequential_msprt', weights: [34, 33, 33], rate: 0.1, mde: 0.1 },
    { method: 'bayesian.always_valid_evalue', weights: [34, 33, 33], rate: 0.1, mde: 0.1 },
  ];
  const draw = new Units(seed + 2000);
  return cases.map((item) => {
    const minSample = item.method === 'bayesian.posterior_threshold' ? { min_sample_per_variant: 1 } : {};
    const rule = resolveDecisionRule({ method: item.method, minimum_detectable_effect: item.mde, ...minSample });
    const [control = 0, ...treatments] = item.weights;
    const metric = { mean: item.rate, variance: item.rate * (1 - item.rate), binary: true };
    const smallest = unitsNeeded({ rule, weights: { control, treatments }, metric }) as number;
    const least = Math.min(...item.weights);
    const units = item.weights.map((weight) => Math.round((smallest * weight) / least));
    const rates = item.weights.map((_, i) => (i === 1 ? item.rate * (1 + item.mde) : item.rate));
    let wins = 0;
    for (let rep = 0; rep < reps; rep++) {
      const conversions = units.map((n, i) => draw.conversions(n, rates[i] as number));
      if (liftedArmWins(rule, units, conversions)) wins++;
    }
    return { ...item, units, simulatedPower: wins / reps };
  });
}

const percent = (x: number) => `${(100 * x).toFixed(1)}%`;
const shortName = (method: DecisionMethod) => method.split('.')[1] as string;

function printPlans(reps: number, seed: number): void {
  console.log(`\nPart 3: one look at the planned units, one treatment with a true lift = MDE, the others none, ${reps} replications`);
  console.log('| rule | weights | rate | MDE | planned units per variant | simulated power |');
  for (const check of checkPlans(reps, seed)) {
    const units = check.units.map((n) => n.toLocaleString('en-US')).join(' / ');
    console.log(`| ${shortName(check.method)} | ${check.weights.join('/')} | ${check.rate} | ${check.mde} | ${units} | ${percent(check.simulatedPower)} |`);
  }
}

function main(): void {
  const reps = Number(args.reps);
  const checkReps = Number(args['check-reps']);
  const seed = Number(args.seed);
  if (args.part === 'plans') {
    printPlans(Number(args['plan-reps']), seed);
    return;
  }
  console.log(
    `Part 1: +10% lift on a 5% rate (5% -> 5.5%), default rule settings, ${reps} replications, seed ${seed}, a look every ${args['look-every']} units per arm`,
  );
  console.log(`| units per arm | ${METHODS.map((m) => `${shortName(m)}: one look | any look`).join(' | ')} |`);
  for (const row of simulateDefaultRules(reps, seed, Number(args['look-every']))) {
    const cells = METHODS.map((_, r) => `${percent(row.singleLook[r] as number)} | ${percent(row.anyLook[r] as number)}`);
    console.log(`| ${row.units.toLocaleString('en-US')} | ${cells.join(' | ')} |`);
  }
  console.log(`\nPart 2: one look at the estimated units, true lift = MDE, ${checkReps} replications`);
  console.log('| rule | rate | MDE | estimated units per variant | simulated power |');
  for (const check of checkEstimates(checkReps, seed)) {
    console.log(`| ${shortName(check.method)} | ${check.rate} | ${check.mde} | ${check.estimate.toLocaleString('en-US')} | ${percent(check.simulatedPower)} |`);
  }
  printPlans(Number(args['plan-reps']), seed);
}

main();
