import { useState } from 'preact/hooks';
import { Checkbox, Field, Select } from '../components/ui.js';
import type { WebhookEndpoint, WebhookEventType } from '../types.js';

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
}

export const BLANK_ENDPOINT: EndpointDraft = { url: '', description: '', format: 'verdict', event_types: ['*'], enabled: true };

/** The editor's start: no URL, since the server shows it only masked; an empty URL keeps the current one. */
export function draftOf(endpoint: WebhookEndpoint): EndpointDraft {
  return {
    url: '',
    description: endpoint.description,
    format: endpoint.format,
    event_types: endpoint.event_types as WebhookEventType[],
    enabled: endpoint.enabled,
  };
}

/** "every event" or the types' names, for the list. */
export function describeEventTypes(types: readonly string[]): string {
  return types.includes('*') ? 'every event' : types.map((type) => type.replace(/^experiment\./, '')).join(', ');
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
            <Checkbox key={type.value} label={`${type.value}: ${type.label}`} checked={chosen.includes(type.value)} onChange={(on) => toggle(type.value, on)} />
          ))}
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
}: {
  draft: EndpointDraft;
  onDraft: (next: EndpointDraft) => void;
  showEnabled: boolean;
  maskedUrl?: string;
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
        />
        <Field label="Description" value={draft.description} onInput={(e) => onDraft({ ...draft, description: e.currentTarget.value })} />
        <Select
          label="Format"
          value={draft.format}
          options={FORMATS}
          onChange={(e) => onDraft({ ...draft, format: e.currentTarget.value as EndpointDraft['format'] })}
        />
      </div>
      <EventTypesField value={draft.event_types} onValue={(event_types) => onDraft({ ...draft, event_types })} />
      {showEnabled ? (
        <Checkbox label="Enabled (a disabled endpoint is sent nothing)" checked={draft.enabled} onChange={(enabled) => onDraft({ ...draft, enabled })} />
      ) : null}
    </>
  );
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
