import { Checkbox, Select } from '../components/ui.js';
import type { Metric } from '../types.js';

interface MetricFieldsProps {
  metrics: Metric[];
  primary: string;
  onPrimary: (metricId: string) => void;
  guardrails: string[];
  onGuardrails: (metricIds: string[]) => void;
}

/** Primary metric ('' for none) and guardrail checkboxes, shared by the new-experiment form and the metrics editor. */
export function MetricFields({ metrics, primary, onPrimary, guardrails, onGuardrails }: MetricFieldsProps) {
  return (
    <>
      <Select
        label="Primary metric"
        value={primary}
        options={[{ value: '', label: 'None' }, ...metrics.map((m) => ({ value: m.id, label: `${m.name} (${m.kind})` }))]}
        onChange={(e) => onPrimary(e.currentTarget.value)}
      />
      {metrics.length > 0 ? <p class="hint">Guardrail metrics (watched for harm, not used for the verdict):</p> : null}
      {metrics.map((m) => (
        <Checkbox
          key={m.id}
          label={m.name}
          checked={guardrails.includes(m.id)}
          onChange={(on) => onGuardrails(on ? [...guardrails, m.id] : guardrails.filter((g) => g !== m.id))}
        />
      ))}
    </>
  );
}
