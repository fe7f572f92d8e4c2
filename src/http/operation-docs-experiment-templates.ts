import { PAGED, type OperationDoc } from './operation-doc.js';

/** Experiment templates: saved starting points for new experiments (docs/experiments.md "Tags, owners and templates"). */
export const EXPERIMENT_TEMPLATE_OPERATION_DOCS: Record<string, OperationDoc> = {
  listExperimentTemplates: { summary: 'List experiment templates', description: `The workspace’s experiment templates, oldest first. ${PAGED}` },
  createExperimentTemplate: {
    summary: 'Create an experiment template',
    description:
      'Saves a name, a description and any of unit_type, variants, decision_rule, the primary, guardrail and secondary metrics, multiple_testing, allocation, auto_stop, variance_reduction, dimensions and tags; with `from_experiment_id`, an experiment’s definition (variants at their starting weights) under the fields given. Checked as an experiment’s would be: 422 with pointers for a metric or experiment not in the workspace, weights not summing to 100, a malformed tag. Audit-logged as experiment_template.created.',
  },
  getExperimentTemplate: { summary: 'Get an experiment template', description: 'One template by id; 404 when there is none in the workspace.' },
  updateExperimentTemplate: {
    summary: 'Update an experiment template',
    description:
      'Any subset of the fields; each one given replaces the template’s. Experiments made from it do not change. 422 as on create; 404 when there is none in the workspace. Audit-logged as experiment_template.updated with what changed.',
  },
  deleteExperimentTemplate: {
    summary: 'Delete an experiment template',
    description:
      'Deletes it; experiments made from it are copies and stay as they are. 404 when there is none in the workspace. Audit-logged as experiment_template.deleted.',
  },
};
