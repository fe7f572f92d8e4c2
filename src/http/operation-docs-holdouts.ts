import { PAGED, type OperationDoc } from './operation-doc.js';

/** The holdouts' operations and the experiments' opt-outs (docs/experiments.md, holdouts). */
export const HOLDOUT_OPERATION_DOCS: Record<string, OperationDoc> = {
  listHoldouts: { summary: 'List holdouts', description: `The workspace’s holdouts, oldest first, optionally in one \`status\`. ${PAGED}` },
  createHoldout: {
    summary: 'Create a holdout',
    description:
      'Creates a draft holdout: an environment, a unit type, a percentage (0.5 to 20) and which experiments it covers (`experiment_ids`, or every experiment started in the environment after the holdout starts), and for its own results the metrics it measures (`metric_ids`) and CUPED (`variance_reduction`). 422 with pointers for an unknown environment or metric or an experiment of another environment or unit type. Audit-logged.',
  },
  getHoldout: { summary: 'Get a holdout', description: 'One holdout by id; 404 when there is none in the workspace.' },
  updateHoldout: {
    summary: 'Update a holdout',
    description:
      'Any subset of the create body while a draft; while running only name, description, a larger percent (held-out units stay held out), metric_ids and variance_reduction; ended and archived holdouts not at all. Those refusals answer 409. Audit-logged.',
  },
  listHoldoutExperiments: {
    summary: 'List a holdout’s experiments',
    description: 'The experiments the holdout covers, with their launches, and those it would cover that opted out.',
  },
  startHoldout: {
    summary: 'Start a holdout',
    description:
      'Moves a draft to running: from now on its share of units gets the control of every covered experiment (reason `holdout`, with `holdout_id`). 409 when it is not a draft. Audit-logged.',
  },
  endHoldout: {
    summary: 'End a holdout',
    description:
      'Moves a running holdout to ended: its units are assigned as everyone else from their next assignment. 409 when it is not running. Audit-logged.',
  },
  archiveHoldout: { summary: 'Archive a holdout', description: 'Archives from any status (ending it when running). Idempotent. Audit-logged.' },
  getExperimentHoldouts: {
    summary: 'Get an experiment’s holdouts',
    description: 'The running holdouts that keep their units on the experiment’s control, and its opt-out if any.',
  },
  optOutOfHoldouts: {
    summary: 'Opt an experiment out of holdouts',
    description:
      'No holdout holds units out of this experiment from its next assignment on, whatever the holdouts list; `reason` says why. Replaces an earlier opt-out. 409 when archived. Audit-logged.',
  },
  computeHoldoutResults: {
    summary: 'Compute a holdout’s snapshot',
    description:
      'Analyses the holdout now: its held-out units (the control) against an equal-size sample of everyone else the covered experiments saw, on each of its `metric_ids`, each unit counted from its first contact to the holdout’s end; with the covered experiments and their launches, and the sample’s effect as the cumulative lift of what launched. 409 for a draft; 422 with a pointer to the metric whose window is longer than the holdout has run. Audit-logged (holdout.results_computed).',
  },
  getHoldoutResults: {
    summary: 'Get a holdout’s latest snapshot',
    description: 'The latest snapshot of the holdout; 404 when none was computed yet.',
  },
  removeHoldoutOptOut: {
    summary: 'Remove an experiment’s holdout opt-out',
    description: 'Holdouts cover the experiment again. 404 when it has not opted out. Audit-logged.',
  },
};
