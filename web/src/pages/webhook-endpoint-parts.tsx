import { useState } from 'preact/hooks';
import { api, type Page } from '../api.js';
import { Checkbox, ErrorBox, Field, Select } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useResource } from '../hooks.js';
import type { Experiment, WebhookEndpoint, WebhookEventType } from '../types.js';

/** Every event type an endpoint can ask for, in words (docs/webhooks.md "Event types"). */
export const EVENT_TYPES: { value: Exclude<WebhookEventType, '*'>; label: string }[] = [
  { value: 'experiment.started', label: 'an experiment starts' },
  { value: 'experiment.stopped', label: 'an experiment stops, by hand or automatically' },
  { value: 'experiment.recommendation_changed', label: 'the recommendation changes (ship, roll back, no difference, investigate)' },
  { value: 'experiment.guardrail_regressed', label: 'a guardrail metric gets worse' },
  { value: 'experiment.srm_detected', label: 'the split stops matching the weights (SRM)' },
  { value: 'experiment.srm_cleared', label: 'the split matches the weights again' },
  { value: 'experiment.no_data', label: 'no exposures after a day, or a metric without events' },
  { value: 'experiment.analysis_failed', label: 'the analysis fails' },
];

/** An event type as a delivery log names it ("Split broken (SRM)"); the type itself is the tooltip. */
const EVENT_NAMES: Record<string, string> = {
  ping: 'Test event',
  'experiment.started': 'Started',
  'experiment.stopped': 'Stopped',
  'experiment.recommendation_changed': 'Recommendation changed',
  'experiment.guardrail_regressed': 'Guardrail got worse',
  'experiment.srm_detected': 'Split broken (SRM)',
  'experiment.srm_cleared': 'Split matches again',
  'experiment.no_data': 'No data',
  'experiment.analysis_failed': 'Analysis failed',
};

export function eventName(type: string): string {
  return EVENT_NAMES[type] ?? type;
}

/** The endpoint's state as a badge a person sees at a glance: failing and disabled stand out, in words. */
export function EndpointState({ endpoint }: { endpoint: WebhookEndpoint }) {
  if (!endpoint.enabled) {
    return (
      <span data-testid="endpoint-state" data-state="disabled">
        <span class="badge badge-endpoint-disabled">Disabled</span>
        {endpoint.disabled_reason ? <div class="hint">by Verdict: {endpoint.disabled_reason}</div> : null}
      </span>
    );
  }
  if (endpoint.failing_since) {
    return (
      <span data-testid="endpoint-state" data-state="failing">
        <span class="badge badge-endpoint-failing">Failing</span>
        <div class="hint">deliveries failing since {dateTime(endpoint.failing_since)}; retried, disabled after three days</div>
      </span>
    );
  }
  return (
    <span data-testid="endpoint-state" data-state="enabled">
      <span class="badge badge-endpoint-enabled">Enabled</span>
    </span>
  );
}

export const FORMATS = [
  { value: 'verdict', label: 'Verdict JSON, signed (Verdict-Signature)' },
  { value: 'slack', label: 'Slack incoming webhook (unsigned: the URL is the secret)' },
];

/** What the endpoint's form edits, as typed. */
export interface EndpointDraft {
  url: string;
  description: string;
  format: 'verdict' | 'slack';
  /** ['*'] for every type. */
  event_types: WebhookEventType[];
  enabled: boolean;
  /** The experiments whose events are sent, or null for every experiment. */
  experiment_ids: string[] | null;
}

export const BLANK_ENDPOINT: EndpointDraft = { url: '', description: '', format: 'verdict', event_types: ['*'], enabled: true, experiment_ids: null };

/** The editor's start: no URL, since the server shows it only masked; an empty URL keeps the current one. */
export function draftOf(endpoint: WebhookEndpoint): EndpointDraft {
  return {
    url: '',
    description: endpoint.description,
    format: endpoint.format,
    event_types: endpoint.event_types as WebhookEventType[],
    enabled: endpoint.enabled,
    experiment_ids: endpoint.experiment_ids,
  };
}

/** "every experiment" or the chosen experiments by name. */
export function describeExperiments(endpoint: WebhookEndpoint): string {
  if (endpoint.experiment_ids === null) return 'every experiment';
  return endpoint.experiments.map((experiment) => experiment.name).join(', ') || 'experiments that no longer exist';
}

/** "every event" or the types' names, for the list. */
export function describeEventTypes(types: readonly string[]): string {
  return types.includes('*') ? 'every event' : types.map(eventName).join(', ');
}

/** "All events", or a checkbox per type; at least one must stay chosen (the server says so if not). */
function EventTypesField({ value, onValue }: { value: WebhookEventType[]; onValue: (next: WebhookEventType[]) => void }) {
  const all = value.includes('*');
  // The types ticked before "All events" was chosen come back when it is unticked.
  const [chosen, setChosen] = useState<WebhookEventType[]>(all ? [] : value);
  const toggle = (type: WebhookEventType, on: boolean) => {
    const next = on ? [...chosen, type] : chosen.filter((item) => item !== type);
    setChosen(next);
    onValue(next);
  };
  return (
    <fieldset>
      <legend>Event types</legend>
      <Checkbox label="All events, including types added later" checked={all} onChange={(on) => onValue(on ? ['*'] : chosen)} />
      {all
        ? null
        : EVENT_TYPES.map((type) => (
            <Checkbox
              key={type.value}
              label={`${eventName(type.value)}: ${type.label}`}
              checked={chosen.includes(type.value)}
              onChange={(on) => toggle(type.value, on)}
            />
          ))}
    </fieldset>
  );
}

/**
 * Every experiment, or only the ticked ones (by name, with a search box once there are many):
 * alerts of the experiments a team owns, not the whole workspace's.
 */
function ExperimentsField({ value, onValue, error }: { value: string[] | null; onValue: (next: string[] | null) => void; error: string | null }) {
  const experiments = useResource(() => api<Page<Experiment>>('GET', '/v1/experiments?limit=200'), []);
  const [search, setSearch] = useState('');
  const [chosen, setChosen] = useState<string[]>(value ?? []);
  const only = value !== null;
  const toggle = (id: string, on: boolean) => {
    const next = on ? [...chosen, id] : chosen.filter((item) => item !== id);
    setChosen(next);
    onValue(next);
  };
  const all = (experiments.data?.data ?? []).filter((experiment) => experiment.status !== 'archived' || chosen.includes(experiment.id));
  const shown = all.filter((experiment) => `${experiment.name} ${experiment.key}`.toLowerCase().includes(search.trim().toLowerCase()));
  return (
    <fieldset data-testid="endpoint-experiments">
      <legend>Experiments</legend>
      <Checkbox label="Every experiment, including ones created later" checked={!only} onChange={(on) => onValue(on ? null : chosen)} />
      {only ? (
        <>
          <ErrorBox error={experiments.error} />
          {all.length > 8 ? <Field label="Find an experiment" type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} /> : null}
          {shown.map((experiment) => (
            <Checkbox key={experiment.id} label={experiment.name} checked={chosen.includes(experiment.id)} onChange={(on) => toggle(experiment.id, on)} />
          ))}
          {all.length === 0 && !experiments.loading ? <p class="muted">No experiments yet.</p> : null}
          {error ? (
            <p class="field-error" role="alert">
              {error}
            </p>
          ) : null}
        </>
      ) : null}
    </fieldset>
  );
}

const URL_HINT = 'http or https; private and loopback addresses are refused unless the server allows them.';

/** What the editor sends: the URL only when one was typed (an empty field keeps the current URL). */
export function patchOf(draft: EndpointDraft): Partial<EndpointDraft> {
  const { url, ...rest } = draft;
  return url === '' ? rest : draft;
}

/**
 * The fields of an endpoint, shared by the create form and the editor. The editor passes the
 * current URL, masked as the server shows it: its field starts empty and replaces the URL when filled.
 */
export function EndpointFields({
  draft,
  onDraft,
  showEnabled,
  maskedUrl,
  errorAt = () => null,
}: {
  draft: EndpointDraft;
  onDraft: (next: EndpointDraft) => void;
  showEnabled: boolean;
  maskedUrl?: string;
  /** The server's problem with a field, by pointer, shown beside it. */
  errorAt?: (pointer: string) => string | null;
}) {
  return (
    <>
      <div class="row">
        <Field
          label={maskedUrl === undefined ? 'URL' : 'New URL'}
          type="url"
          required={maskedUrl === undefined}
          value={draft.url}
          placeholder={maskedUrl}
          onInput={(e) => onDraft({ ...draft, url: e.currentTarget.value })}
          hint={maskedUrl === undefined ? URL_HINT : `Empty keeps the current URL (shown masked: it is a secret). ${URL_HINT}`}
          error={errorAt('/url')}
        />
        <Field
          label="Description"
          value={draft.description}
          onInput={(e) => onDraft({ ...draft, description: e.currentTarget.value })}
          error={errorAt('/description')}
        />
        <Select
          label="Format"
          value={draft.format}
          options={FORMATS}
          onChange={(e) => onDraft({ ...draft, format: e.currentTarget.value as EndpointDraft['format'] })}
        />
      </div>
      <EventTypesField value={draft.event_types} onValue={(event_types) => onDraft({ ...draft, event_types })} />
      <ExperimentsField value={draft.experiment_ids} onValue={(experiment_ids) => onDraft({ ...draft, experiment_ids })} error={experimentsError(errorAt)} />
      {showEnabled ? (
        <Checkbox label="Enabled (a disabled endpoint is sent nothing)" checked={draft.enabled} onChange={(enabled) => onDraft({ ...draft, enabled })} />
      ) : null}
    </>
  );
}

/** The server's problem with the filter: the list itself, or one of its ids. */
function experimentsError(errorAt: (pointer: string) => string | null): string | null {
  const list = errorAt('/experiment_ids');
  if (list) return `Choose at least one experiment, or tick “Every experiment” (${list}).`;
  for (let index = 0; index < 100; index += 1) {
    const one = errorAt(`/experiment_ids/${index}`);
    if (one) return `An experiment ${one}; reload the page and choose again.`;
  }
  return null;
}

/** What the server found wrong with the URL when it was saved (it is saved anyway). */
export function UrlWarnings({ warnings }: { warnings: string[] | undefined }) {
  if (!warnings || warnings.length === 0) return null;
  return (
    <div class="warning" role="status" data-testid="url-warnings">
      {warnings.map((warning) => (
        <p key={warning}>{warning}</p>
      ))}
    </div>
  );
}
