import type { Experiment } from '../types.js';

/** The tags of the address's `tag` parameter ("a,b"), as the API reads them. */
export function tagsOf(text: string): string[] {
  return [
    ...new Set(
      text
        .split(',')
        .map((tag) => tag.trim().toLowerCase())
        .filter(Boolean),
    ),
  ];
}

/** An experiment's tags, each a button that narrows the list to it. */
export function TagChips({ experiment, active, onTag }: { experiment: Experiment; active: string[]; onTag: (tag: string) => void }) {
  if (experiment.tags.length === 0) return null;
  return (
    <ul class="chips" aria-label={`Tags of ${experiment.name}`}>
      {experiment.tags.map((tag) => (
        <li key={tag}>
          <button
            type="button"
            class={active.includes(tag) ? 'chip chip-on' : 'chip'}
            aria-pressed={active.includes(tag)}
            title={`Only experiments tagged ${tag}`}
            onClick={() => onTag(tag)}
          >
            {tag}
          </button>
        </li>
      ))}
    </ul>
  );
}

/** Who owns it, a button that narrows the list to their experiments (by name: the address stays readable). */
export function OwnerCell({ experiment, onOwner }: { experiment: Experiment; onOwner: (owner: string) => void }) {
  const owner = experiment.owner;
  if (!owner) return <td class="muted">—</td>;
  return (
    <td>
      <button type="button" class="link-button" title={`Only experiments of ${owner.name}`} onClick={() => onOwner(owner.name)}>
        {owner.name}
      </button>
    </td>
  );
}

/** The tag and owner filters in effect, each removable. */
export function ActiveFilters({
  tags,
  owner,
  onRemoveTag,
  onRemoveOwner,
}: {
  tags: string[];
  owner: string;
  onRemoveTag: (tag: string) => void;
  onRemoveOwner: () => void;
}) {
  if (tags.length === 0 && !owner) return null;
  return (
    <ul class="chips active-filters" aria-label="Filters in effect">
      {tags.map((tag) => (
        <li key={tag}>
          <span class="chip chip-on">
            tag: {tag}{' '}
            <button type="button" class="chip-remove" aria-label={`Remove the tag filter ${tag}`} onClick={() => onRemoveTag(tag)}>
              ×
            </button>
          </span>
        </li>
      ))}
      {owner ? (
        <li>
          <span class="chip chip-on">
            owner: {owner}{' '}
            <button type="button" class="chip-remove" aria-label="Remove the owner filter" onClick={onRemoveOwner}>
              ×
            </button>
          </span>
        </li>
      ) : null}
    </ul>
  );
}
