// What other slices may use of warehouse sources: the analysis runs its statements on a source
// through a session (always read-only, bounded in time) and checks a metric's row filter here.
export { SourceError, withSource, type QueryParams, type SessionLimits, type SourceSession } from './connectors/index.js';
export { readOnlyExpressionDefect } from './read-only-sql.js';
export { factMetricErrors, openFactTable, type FactMetricDefinition, type FactReaderDeps, type OpenedFactTable } from './fact-metric.js';
