import type { Migration, MigrationProvider } from 'kysely';
import type { SecretBox } from '../../lib/secrets.js';
import * as foundation from './0001_foundation.js';
import * as catalogue from './0002_catalogue.js';
import * as events from './0003_events.js';
import * as experiments from './0004_experiments.js';
import * as templates from './0005_templates.js';
import * as analysis from './0006_analysis.js';
import * as webhooks from './0007_webhooks.js';
import * as sessions from './0008_sessions.js';
import * as metricEffects from './0009_metric_effects.js';
import * as varianceReduction from './0010_experiment_variance_reduction.js';
import * as dimensions from './0011_dimensions.js';
import * as analysisRollups from './0012_analysis_rollups.js';
import * as metricUnit from './0013_metric_unit.js';
import * as outboundWebhooks from './0014_outbound_webhooks.js';
import * as bandits from './0016_bandits.js';
import * as analysisRollupTotals from './0017_analysis_rollup_totals.js';
import * as clickhouseMirror from './0020_clickhouse_mirror.js';
import * as experimentStoppedBy from './0023_experiment_stopped_by.js';
import * as auditActorIndex from './0024_audit_actor_index.js';
import * as clickhouseDrainSequence from './0027_clickhouse_drain_sequence.js';
import { sealEndpointUrls } from './0028_sealed_endpoint_urls.js';
import * as jobLanes from './0029_job_lanes.js';
import * as experimentLaunch from './0030_experiment_launch.js';
import * as holdouts from './0031_holdouts.js';
import * as people from './0032_people.js';
import * as shareLinks from './0033_share_links.js';
import * as secondaryMetrics from './0034_secondary_metrics.js';
import * as quantileMetrics from './0035_quantile_metrics.js';
import * as sequenceMetrics from './0036_sequence_metrics.js';
import * as endpointExperimentFilter from './0037_endpoint_experiment_filter.js';
import * as experimentTagsOwnerTemplates from './0038_experiment_tags_owner_templates.js';
import * as dataSources from './0039_data_sources.js';
import * as factMetrics from './0040_fact_metrics.js';
import * as holdoutAnalysis from './0041_holdout_analysis.js';
import * as assignmentSources from './0042_assignment_sources.js';
import * as warehouseRefresh from './0043_warehouse_refresh.js';

// Migrations are listed in code rather than read from a folder, so they work the same from
// sources, tests and any bundle. Append new ones; never edit one that has shipped.
const migrations: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_catalogue': catalogue,
  '0003_events': events,
  '0004_experiments': experiments,
  '0005_templates': templates,
  '0006_analysis': analysis,
  '0007_webhooks': webhooks,
  '0008_sessions': sessions,
  '0009_metric_effects': metricEffects,
  '0010_experiment_variance_reduction': varianceReduction,
  '0011_dimensions': dimensions,
  '0012_analysis_rollups': analysisRollups,
  '0013_metric_unit': metricUnit,
  '0014_outbound_webhooks': outboundWebhooks,
  '0016_bandits': bandits,
  '0017_analysis_rollup_totals': analysisRollupTotals,
  '0020_clickhouse_mirror': clickhouseMirror,
  '0023_experiment_stopped_by': experimentStoppedBy,
  '0024_audit_actor_index': auditActorIndex,
  '0027_clickhouse_drain_sequence': clickhouseDrainSequence,
  '0029_job_lanes': jobLanes,
  '0030_experiment_launch': experimentLaunch,
  '0031_holdouts': holdouts,
  '0032_people': people,
  '0033_share_links': shareLinks,
  '0034_secondary_metrics': secondaryMetrics,
  '0035_quantile_metrics': quantileMetrics,
  '0036_sequence_metrics': sequenceMetrics,
  '0037_endpoint_experiment_filter': endpointExperimentFilter,
  '0038_experiment_tags_owner_templates': experimentTagsOwnerTemplates,
  '0039_data_sources': dataSources,
  '0040_fact_metrics': factMetrics,
  '0041_holdout_analysis': holdoutAnalysis,
  '0042_assignment_sources': assignmentSources,
  '0043_warehouse_refresh': warehouseRefresh,
};

/**
 * Every migration. Those that seal stored secrets need the secret box; without one they still run
 * on a database with nothing to seal (a new one), and stop with an error on one that has.
 */
export function migrationProvider(secrets: SecretBox | null): MigrationProvider {
  return {
    getMigrations: async () => ({ ...migrations, '0028_sealed_endpoint_urls': sealEndpointUrls(secrets) }),
  };
}
