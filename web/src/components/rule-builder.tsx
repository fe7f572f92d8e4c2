import { useEffect, useState } from 'preact/hooks';
import type { FieldError } from '../api.js';
import { isCompound, isSegment, OP_KEYS, OPS, parseList, valueFor, type Compound, type Condition, type Op, type Rule, type Scalar } from '../rules.js';
import { JsonView, useJsonText } from './json-view.js';
import { Field, Select } from './ui.js';

// A form for audience and segment rules: groups (all of / any of), negation, conditions with
// every op of the rule format, and segment references; a JSON view for experts edits the same
// value, so switching between the two changes nothing.

export interface SegmentChoice {
  key: string;
  name: string;
}

interface NodeProps {
  rule: Rule;
  path: string;
  onChange: (next: Rule) => void;
  onRemove: () => void;
  segments: SegmentChoice[];
  errors: FieldError[];
  root?: boolean;
}

const blankCondition = (): Condition => ({ attribute: '', op: 'eq', value: '' });

/** The server's problems that belong to this node itself (a compound's operands show their own). */
function NodeErrors({ errors, path, compound }: { errors: FieldError[]; path: string; compound: boolean }) {
  const own = errors.filter((e) => {
    const pointer = e.pointer ?? '';
    if (pointer !== path && !pointer.startsWith(`${path}/`)) return false;
    return !compound || !pointer.startsWith(`${path}/operands/`);
  });
  if (own.length === 0) return null;
  return (
    <p class="field-error" role="alert">
      {own.map((e) => e.message).join('; ')}
    </p>
  );
}

type ScalarType = 'string' | 'number' | 'boolean';
const typeOptions = [
  { value: 'string', label: 'text' },
  { value: 'number', label: 'number' },
  { value: 'boolean', label: 'true / false' },
];

function typeOf(value: Scalar | undefined): ScalarType {
  return typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'boolean' : 'string';
}

function convert(value: Scalar | undefined, type: ScalarType): Scalar {
  if (type === 'number') return Number(value) || 0;
  if (type === 'boolean') return value === true || value === 'true';
  return value === undefined ? '' : String(value);
}

/** A list typed as text: kept as typed, so "DE, " is not lost while a person types. */
function ListValue({ value, onValue }: { value: Scalar[]; onValue: (next: Scalar[]) => void }) {
  const type = typeOf(value[0]);
  const [text, setText] = useState(value.join(', '));
  useEffect(() => {
    if (JSON.stringify(parseList(text, type)) !== JSON.stringify(value)) setText(value.join(', '));
  }, [JSON.stringify(value)]);
  return (
    <>
      <Select label="List of" value={type} options={typeOptions} onChange={(e) => onValue(value.map((v) => convert(v, e.currentTarget.value as ScalarType)))} />
      <Field
        label="Values"
        value={text}
        hint="Comma-separated"
        onInput={(e) => {
          setText(e.currentTarget.value);
          onValue(parseList(e.currentTarget.value, type));
        }}
      />
    </>
  );
}

function ScalarValue({ value, types, onValue }: { value: Scalar; types: ScalarType[]; onValue: (next: Scalar) => void }) {
  const type = typeOf(value);
  return (
    <>
      {types.length > 1 ? (
        <Select
          label="Type"
          value={type}
          options={typeOptions.filter((o) => types.includes(o.value as ScalarType))}
          onChange={(e) => onValue(convert(value, e.currentTarget.value as ScalarType))}
        />
      ) : null}
      {type === 'boolean' ? (
        <Select
          label="Value"
          value={String(value)}
          options={[
            { value: 'true', label: 'true' },
            { value: 'false', label: 'false' },
          ]}
          onChange={(e) => onValue(e.currentTarget.value === 'true')}
        />
      ) : (
        <Field
          label="Value"
          type={type === 'number' ? 'number' : 'text'}
          step="any"
          value={String(value)}
          onInput={(e) => onValue(type === 'number' ? Number(e.currentTarget.value) : e.currentTarget.value)}
        />
      )}
    </>
  );
}

/** The value's inputs for the op: a list, a typed scalar, a number or date, text, or present/missing. */
function ValueEditor({ condition, onValue }: { condition: Condition; onValue: (next: Condition['value']) => void }) {
  const kind = OPS[condition.op]?.value ?? 'scalar';
  const value = condition.value;
  if (kind === 'list') return <ListValue value={Array.isArray(value) ? value : [value]} onValue={onValue} />;
  const scalar = Array.isArray(value) ? (value[0] ?? '') : value;
  if (kind === 'boolean') {
    return (
      <Select
        label="Value"
        value={String(scalar === true)}
        options={[
          { value: 'true', label: 'present (not null)' },
          { value: 'false', label: 'missing or null' },
        ]}
        onChange={(e) => onValue(e.currentTarget.value === 'true')}
      />
    );
  }
  if (kind === 'ordered') return <ScalarValue value={scalar} types={['number', 'string']} onValue={onValue} />;
  if (kind === 'text') return <Field label="Value" value={String(scalar)} onInput={(e) => onValue(e.currentTarget.value)} />;
  return <ScalarValue value={scalar} types={['string', 'number', 'boolean']} onValue={onValue} />;
}

function NodeButtons({ rule, onChange, onRemove, root }: { rule: Rule; onChange: (next: Rule) => void; onRemove: () => void; root?: boolean }) {
  return (
    <span class="rule-buttons">
      {root && !isCompound(rule) ? (
        <button type="button" onClick={() => onChange({ operator: 'and', operands: [rule, blankCondition()] })}>
          And another condition
        </button>
      ) : null}
      <button type="button" onClick={() => onChange({ operator: 'not', operands: [rule] })}>
        Negate
      </button>
      <button type="button" onClick={onRemove}>
        Remove
      </button>
    </span>
  );
}

function ConditionNode({ rule, path, onChange, onRemove, errors, root }: NodeProps & { rule: Condition }) {
  return (
    <div class="rule-node rule-condition" data-pointer={path}>
      <div class="row">
        <Field
          label="Attribute"
          value={rule.attribute}
          placeholder="a context path, e.g. user.plan"
          onInput={(e) => onChange({ ...rule, attribute: e.currentTarget.value })}
        />
        <Select
          label="Operator"
          value={rule.op}
          options={OP_KEYS.map((op) => ({ value: op, label: `${OPS[op].label} (${op})` }))}
          onChange={(e) => {
            const op = e.currentTarget.value as Op;
            onChange({ ...rule, op, value: valueFor(op, rule.value) });
          }}
        />
        <ValueEditor condition={rule} onValue={(value) => onChange({ ...rule, value })} />
      </div>
      <NodeErrors errors={errors} path={path} compound={false} />
      <NodeButtons rule={rule} onChange={onChange} onRemove={onRemove} root={root} />
    </div>
  );
}

function SegmentNode({ rule, path, onChange, onRemove, segments, errors, root }: NodeProps & { rule: { segment: string } }) {
  const known = segments.some((s) => s.key === rule.segment);
  return (
    <div class="rule-node rule-segment" data-pointer={path}>
      <Select
        label="In segment"
        value={rule.segment}
        options={[
          ...(known || !rule.segment ? [] : [{ value: rule.segment, label: `${rule.segment} (unknown)` }]),
          ...segments.map((s) => ({ value: s.key, label: s.name })),
        ]}
        onChange={(e) => onChange({ segment: e.currentTarget.value })}
      />
      <NodeErrors errors={errors} path={path} compound={false} />
      <NodeButtons rule={rule} onChange={onChange} onRemove={onRemove} root={root} />
    </div>
  );
}

function GroupButtons({
  rule,
  onChange,
  onRemove,
  add,
  segments,
}: {
  rule: Compound;
  onChange: (next: Rule) => void;
  onRemove: () => void;
  add: (next: Rule) => void;
  segments: SegmentChoice[];
}) {
  return (
    <span class="rule-buttons">
      {rule.operator === 'not' ? (
        <button type="button" onClick={() => rule.operands[0] && onChange(rule.operands[0])}>
          Remove negation
        </button>
      ) : (
        <>
          <button type="button" onClick={() => add(blankCondition())}>
            Add condition
          </button>
          <button type="button" onClick={() => add({ operator: rule.operator === 'and' ? 'or' : 'and', operands: [blankCondition()] })}>
            Add group
          </button>
          <button type="button" disabled={segments.length === 0} onClick={() => add({ segment: segments[0]?.key ?? '' })}>
            Add segment
          </button>
        </>
      )}
      <button type="button" onClick={onRemove}>
        Remove group
      </button>
    </span>
  );
}

function GroupNode({ rule, path, onChange, onRemove, segments, errors }: NodeProps & { rule: Compound }) {
  const setOperand = (i: number, next: Rule) => onChange({ ...rule, operands: rule.operands.map((o, j) => (j === i ? next : o)) });
  const removeOperand = (i: number) => onChange({ ...rule, operands: rule.operands.filter((_o, j) => j !== i) });
  const add = (next: Rule) => onChange({ ...rule, operands: [...rule.operands, next] });
  const negation = rule.operator === 'not';
  return (
    <div class={`rule-node rule-group rule-${rule.operator}`} data-pointer={path}>
      <div class="rule-group-head">
        {negation ? (
          <strong>Not:</strong>
        ) : (
          <Select
            label="Match"
            value={rule.operator}
            options={[
              { value: 'and', label: 'all of these (and)' },
              { value: 'or', label: 'any of these (or)' },
            ]}
            onChange={(e) => onChange({ ...rule, operator: e.currentTarget.value as 'and' | 'or' })}
          />
        )}
        <NodeErrors errors={errors} path={path} compound />
      </div>
      <div class="rule-operands">
        {rule.operands.map((operand, i) => (
          <RuleNode
            key={i}
            rule={operand}
            path={`${path}/operands/${i}`}
            onChange={(next) => setOperand(i, next)}
            onRemove={() => removeOperand(i)}
            segments={segments}
            errors={errors}
          />
        ))}
      </div>
      <GroupButtons rule={rule} onChange={onChange} onRemove={onRemove} add={add} segments={segments} />
    </div>
  );
}

function RuleNode(props: NodeProps) {
  const { rule } = props;
  if (isCompound(rule)) return <GroupNode {...props} rule={rule} />;
  if (isSegment(rule)) return <SegmentNode {...props} rule={rule} />;
  return <ConditionNode {...props} rule={rule as Condition} />;
}

export interface RuleBuilderProps {
  label: string;
  value: Rule | null;
  /** `invalid` names a JSON mistake in the JSON view; the value then stays the last good one. */
  onChange: (next: Rule | null, invalid?: string) => void;
  segments: SegmentChoice[];
  /** The server's 422 problems; those under `pointer` show beside their part of the rule. */
  errors?: FieldError[];
  pointer: string;
}

/** The rule builder with its JSON view. `null` is everyone. */
export function RuleBuilder({ label, value, onChange, segments, errors = [], pointer }: RuleBuilderProps) {
  const [mode, setMode] = useState<'builder' | 'json'>('builder');
  const view = useJsonText<Rule | null>(value, onChange, null);
  const toggle = () => {
    if (mode === 'builder') view.open();
    setMode(mode === 'json' ? 'builder' : 'json');
  };
  return (
    <fieldset class="rule-builder" data-testid="rule-builder">
      <legend>{label}</legend>
      <div class="actions">
        <button type="button" aria-pressed={mode === 'json'} onClick={toggle} disabled={mode === 'json' && Boolean(view.mistake)}>
          {mode === 'json' ? 'Back to the builder' : 'Edit as JSON'}
        </button>
      </div>
      {mode === 'json' ? (
        <>
          <JsonView label={`${label} (JSON)`} state={view} hint="Empty: everyone." />
          <NodeErrors errors={errors} path={pointer} compound={false} />
        </>
      ) : value === null ? (
        <p>
          Everyone.{' '}
          <button type="button" onClick={() => onChange(blankCondition())}>
            Add a condition
          </button>{' '}
          <button type="button" disabled={segments.length === 0} onClick={() => onChange({ segment: segments[0]?.key ?? '' })}>
            Add a segment
          </button>
        </p>
      ) : (
        <RuleNode rule={value} path={pointer} onChange={(next) => onChange(next)} onRemove={() => onChange(null)} segments={segments} errors={errors} root />
      )}
    </fieldset>
  );
}
