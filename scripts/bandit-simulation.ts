/**
 * Seeded simulation of Verdict's bandit (docs/statistics.md "Bandits"). Not a test: it draws tens of
 * millions of units.
 *
 *   npx tsx scripts/bandit-simulation.ts [--reps 50] [--seed 1] [--draws 5000]
 *
 * Every scenario runs the product's rule with its defaults: 24 hours of burn-in at equal weights,
 * then an update every hour once every arm has 100 units, P(best) by Thompson sampling from the
 * period-stratified normal posteriors, weights f + (1 - K f) P(best) with f = 0.01 as integer
 * percentages. 1,000 units arrive per hour for 14 days; each converts at its arm's true rate.
 * (--draws sets the Thompson draws per update; the server uses 100,000, the simulation fewer to
 * stay cheap; P(best) then has a standard error of at most 0.007.)
 *
 * 1. Three arms converting 5.0%, 5.5%, 6.0%: the share of units sent to the best arm by day, and the
 *    regret (conversions lost against always showing the best arm) against a fixed equal split.
 * 2. Two arms where B converts 6% and A 5% in week one, then both 4% in week two: the true
 *    traffic-weighted lift is +0.5 points. The stratified estimate against the pooled one.
 * 3. A/A: three arms all at 5%: how often prob_best reaches 0.95 at some update (the bandit's
 *    stopping rule names a winner).
 */
import mt19937 from '@stdlib/random-base-mt19937';
import { parseArgs } from 'node:util';
import { banditUpdate, stratifiedEstimates } from '../src/stats/bandit.js';
import type { SufficientStats } from '../src/stats/normal.js';

const { values: args } = parseArgs({
  options: { reps: { type: 'string', default: '50' }, seed: { type: 'string', default: '1' }, draws: { type: 'string', default: '5000' } },
});
const REPS = Number(args.reps);
const SEED = Number(args.seed);
const DRAWS = Number(args.draws);
const UNITS_PER_HOUR = 1000;
const HOURS = 14 * 24;
const BURN_IN_HOURS = 24;
const FLOOR = 0.01;
const MIN_UNITS = 100;
const STOP_AT = 0.95;
const TWO_32 = 4294967296;

/** True conversion rate of each arm in a given hour. */
type Rates = (hour: number) => number[];

interface Run {
  /** Share of each hour's units sent to each arm. */
  hourlyShares: number[][];
  /** Per arm, per period (one period per weight change): units and conversions. */
  cells: SufficientStats[][];
  /** Expected conversions lost against the best arm of each hour. */
  regret: number;
  /** prob_best of every arm at the first update where one reached STOP_AT, or null. */
  winner: number | null;
}

function emptyCell(): SufficientStats {
  return { n: 0, sum: 0, sumOfSquares: 0 };
}

/** One experiment: hourly arrivals, an update each hour after the burn-in. */
function runBandit(rates: Rates, armCount: number, seed: number, bandit: boolean): Run {
  const random = mt19937.factory({ seed });
  let weights = new Array<number>(armCount).fill(100 / armCount);
  const cells: SufficientStats[][] = Array.from({ length: armCount }, () => [emptyCell()]);
  const hourlyShares: number[][] = [];
  let regret = 0;
  let winner: number | null = null;
  for (let hour = 0; hour < HOURS; hour += 1) {
    const truth = rates(hour);
    const best = Math.max(...truth);
    const sent = new Array<number>(armCount).fill(0);
    for (let unit = 0; unit < UNITS_PER_HOUR; unit += 1) {
      let pick = (random() / TWO_32) * 100;
      let arm = 0;
      while (arm < armCount - 1 && pick >= (weights[arm] as number)) pick -= weights[arm++] as number;
      const converted = random() / TWO_32 < (truth[arm] as number) ? 1 : 0;
      const cell = cells[arm]?.at(-1) as SufficientStats;
      cell.n += 1;
      cell.sum += converted;
      cell.sumOfSquares += converted;
      sent[arm] = (sent[arm] as number) + 1;
      regret += best - (truth[arm] as number);
    }
    hourlyShares.push(sent.map((n) => n / UNITS_PER_HOUR));
    if (!bandit || hour + 1 < BURN_IN_HOURS) continue;
    const units = cells.map((row) => row.reduce((sum, cell) => sum + cell.n, 0));
    if (Math.min(...units) < MIN_UNITS) continue;
    const estimates = stratifiedEstimates(cells);
    const posteriors = estimates.map((e) => ({ mean: e.mean, variance: e.varianceOfMean ?? 0 }));
    const update = banditUpdate(posteriors, FLOOR, { seed: seed * 1000 + hour, draws: DRAWS });
    if (winner === null && Math.max(...update.probBest) >= STOP_AT) winner = update.probBest.indexOf(Math.max(...update.probBest));
    weights = update.percentages;
    for (const row of cells) row.push(emptyCell());
  }
  return { hourlyShares, cells, regret, winner };
}

function mean(values: number[]): number {
  return values.reduce((sum, x) => sum + x, 0) / values.length;
}

function standardError(values: number[]): number {
  const m = mean(values);
  return Math.sqrt(values.reduce((sum, x) => sum + (x - m) ** 2, 0) / (values.length - 1) / values.length);
}

const pct = (x: number, digits = 1) => `${(100 * x).toFixed(digits)}%`;

function threeArms(): void {
  const rates = () => [0.05, 0.055, 0.06];
  const runs = Array.from({ length: REPS }, (_, rep) => runBandit(rates, 3, SEED + rep, true));
  const fixed = Array.from({ length: REPS }, (_, rep) => runBandit(rates, 3, SEED + rep, false));
  console.log(`\n1. Three arms 5.0% / 5.5% / 6.0%, ${REPS} replications`);
  console.log('| day | share of that day’s units sent to the 6.0% arm (mean ± s.e.) |\n| --- | --- |');
  for (const day of [1, 2, 3, 5, 7, 10, 14]) {
    const shares = runs.map((run) => mean(run.hourlyShares.slice((day - 1) * 24, day * 24).map((s) => s[2] as number)));
    console.log(`| ${day} | ${pct(mean(shares))} ± ${pct(standardError(shares))} |`);
  }
  const bandit = runs.map((run) => run.regret);
  const split = fixed.map((run) => run.regret);
  console.log(`Regret over ${HOURS * UNITS_PER_HOUR} units (expected conversions lost against the 6.0% arm):`);
  console.log(
    `bandit ${mean(bandit).toFixed(0)} ± ${standardError(bandit).toFixed(0)}, fixed equal split ${mean(split).toFixed(0)} ± ${standardError(split).toFixed(0)}`,
  );
}

function lift(cells: SufficientStats[][], stratified: boolean): number {
  if (stratified) {
    const [a, b] = stratifiedEstimates(cells);
    return (b?.mean as number) - (a?.mean as number);
  }
  const pooled = cells.map((row) => row.reduce((sum, c) => sum + c.sum, 0) / row.reduce((sum, c) => sum + c.n, 0));
  return (pooled[1] as number) - (pooled[0] as number);
}

function betterOnlyInWeekOne(): void {
  const rates = (hour: number) => (hour < 7 * 24 ? [0.05, 0.06] : [0.04, 0.04]);
  const runs = Array.from({ length: REPS }, (_, rep) => runBandit(rates, 2, SEED + 10_000 + rep, true));
  const stratified = runs.map((run) => lift(run.cells, true));
  const pooled = runs.map((run) => lift(run.cells, false));
  const shareB = runs.map((run) => mean(run.hourlyShares.map((s) => s[1] as number)));
  console.log(`\n2. B better only in week one (6% vs 5%, then 4% vs 4%); true lift +0.50 points; ${REPS} replications`);
  console.log(`B's share of all units ${pct(mean(shareB))}`);
  console.log(`stratified lift ${(100 * mean(stratified)).toFixed(3)} ± ${(100 * standardError(stratified)).toFixed(3)} points`);
  console.log(`pooled lift     ${(100 * mean(pooled)).toFixed(3)} ± ${(100 * standardError(pooled)).toFixed(3)} points`);
}

function aa(): void {
  const runs = Array.from({ length: REPS }, (_, rep) => runBandit(() => [0.05, 0.05, 0.05], 3, SEED + 20_000 + rep, true));
  const named = runs.filter((run) => run.winner !== null).length;
  console.log(`\n3. A/A, three arms at 5%, ${REPS} replications: prob_best reached ${STOP_AT} at some hourly update in ${named} (${pct(named / REPS)})`);
}

threeArms();
betterOnlyInWeekOne();
aa();
