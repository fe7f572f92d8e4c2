import type { Executor } from '../../db/database.js';
import type { FieldError } from '../../http/problems.js';
import { collectSegmentKeys, type AudienceExpression } from '../assignment/audience.js';
import { findAssignmentSource } from '../assignment-sources/read.js';
import { findEnvironment } from '../environments/read.js';
import { findMetricsByIds } from '../metrics/read.js';
import { findMutexGroup } from '../mutex-groups/read.js';
import { loadSegmentRules, lockSegmentsOf } from '../segments/read.js';

export interface References {
  environment_id?: string;
  primary_metric_id?: string | null;
  guardrail_metric_ids?: string[];
  secondary_metric_ids?: string[];
  mutex_group_id?: string | null;
  audience?: Record<string, unknown> | null;
  assignment_source_id?: string | null;
}

/** Every id and segment key the experiment points at must exist in the caller's workspace. */
export async function referenceErrors(executor: Executor, workspaceId: string, refs: References): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  if (refs.environment_id !== undefined && !(await findEnvironment(executor, workspaceId, refs.environment_id))) {
    errors.push({ pointer: '/environment_id', message: 'no environment with this id exists in the workspace' });
  }
  const metricIds = [...(refs.primary_metric_id ? [refs.primary_metric_id] : []), ...(refs.guardrail_metric_ids ?? []), ...(refs.secondary_metric_ids ?? [])];
  if (metricIds.length > 0) {
    const found = new Set((await findMetricsByIds(executor, workspaceId, metricIds)).map((metric) => metric.id));
    if (refs.primary_metric_id && !found.has(refs.primary_metric_id)) {
      errors.push({ pointer: '/primary_metric_id', message: 'no metric with this id exists in the workspace' });
    }
    (refs.guardrail_metric_ids ?? []).forEach((id, index) => {
      if (!found.has(id)) errors.push({ pointer: `/guardrail_metric_ids/${index}`, message: 'no metric with this id exists in the workspace' });
    });
    (refs.secondary_metric_ids ?? []).forEach((id, index) => {
      if (!found.has(id)) errors.push({ pointer: `/secondary_metric_ids/${index}`, message: 'no metric with this id exists in the workspace' });
    });
  }
  if (refs.mutex_group_id && !(await findMutexGroup(executor, workspaceId, refs.mutex_group_id))) {
    errors.push({ pointer: '/mutex_group_id', message: 'no mutex group with this id exists in the workspace' });
  }
  if (refs.assignment_source_id && !(await findAssignmentSource(executor, workspaceId, refs.assignment_source_id))) {
    errors.push({ pointer: '/assignment_source_id', message: 'no assignment source with this id exists in the workspace' });
  }
  if (refs.audience) {
    const keys = collectSegmentKeys(refs.audience as unknown as AudienceExpression);
    if (keys.length > 0) {
      // Serialises with segment writes so a referenced segment cannot be deleted meanwhile.
      await lockSegmentsOf(executor, workspaceId);
      const known = await loadSegmentRules(executor, workspaceId);
      const missing = keys.filter((key) => !known.has(key));
      if (missing.length > 0) errors.push({ pointer: '/audience', message: `unknown segment(s): ${missing.join(', ')}` });
    }
  }
  return errors;
}
