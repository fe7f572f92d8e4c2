import type { AnalysisFailureListener, SnapshotListener } from '../analysis/read.js';
import type { LifecycleListener } from '../experiments/lifecycle.js';
import { onAnalysisFailed, onLifecycle, onSnapshot } from './service.js';
import type { AlertsDeps } from './deps.js';

export interface AlertsSlice {
  onSnapshot: SnapshotListener;
  onAnalysisFailed: AnalysisFailureListener;
  onLifecycle: LifecycleListener;
}

export function createAlerts(deps: AlertsDeps): AlertsSlice {
  return {
    onSnapshot: (trx, { experiment, snapshot }) => onSnapshot(deps, trx, experiment, snapshot),
    onAnalysisFailed: (trx, { experimentId, reason }) => onAnalysisFailed(deps, trx, experimentId, reason),
    onLifecycle: (trx, event) => onLifecycle(deps, trx, event),
  };
}
