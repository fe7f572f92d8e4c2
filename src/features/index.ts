/**
 * The composition root of the feature slices: every factory is called once, in dependency order
 * (OFREP assigns through the assignment slice's Assigner), and src/http/app.ts registers their
 * routes. Slices that others read expose read.ts; none reaches into another's store.ts.
 */
import type { AppContext } from '../context.js';
import { createAnalysis } from './analysis/index.js';
import { createAssignment } from './assignment/index.js';
import { createEnvironments } from './environments/index.js';
import { createEvents } from './events/index.js';
import { createExperiments } from './experiments/index.js';
import { createMetrics } from './metrics/index.js';
import { createMutexGroups } from './mutex-groups/index.js';
import { createOfrep } from './ofrep/index.js';
import { createSegments } from './segments/index.js';

export function createSlices(ctx: AppContext) {
  const environments = createEnvironments(ctx);
  const events = createEvents(ctx);
  const metrics = createMetrics(ctx);
  const segments = createSegments(ctx);
  const experiments = createExperiments(ctx);
  const mutexGroups = createMutexGroups(ctx);
  const assignment = createAssignment(ctx);
  const ofrep = createOfrep({ db: ctx.db, assigner: assignment.assigner });
  const analysis = createAnalysis(ctx);
  return { environments, events, metrics, segments, experiments, mutexGroups, assignment, ofrep, analysis };
}

export type Slices = ReturnType<typeof createSlices>;
