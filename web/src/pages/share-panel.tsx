import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorBox, SecretOnce } from '../components/ui.js';
import { useAction } from '../hooks.js';

/**
 * Share a result: a read-only link (shown once) and the exports. Creating a link is an editor's
 * change, hidden from viewers (data-edit); the exports are reads anyone signed in may download.
 */
export function SharePanel({ experimentId }: { experimentId: string }) {
  const action = useAction();
  const [url, setUrl] = useState<string | null>(null);
  const [days, setDays] = useState('7');
  const share = () =>
    void action.run(async () => {
      const created = await api<{ url: string }>('POST', `/v1/experiments/${experimentId}/share-links`, { expires_in_days: Number(days) });
      setUrl(created.url);
    });
  return (
    <section class="card" aria-labelledby="share-title">
      <h2 id="share-title">Share and export</h2>
      {url ? <SecretOnce label="Read-only link to these results" secret={url} onDone={() => setUrl(null)} /> : null}
      <p data-edit>
        <label>
          Link valid for{' '}
          <select aria-label="Days the link is valid" value={days} onChange={(e) => setDays(e.currentTarget.value)}>
            {['1', '7', '30', '90'].map((value) => (
              <option key={value} value={value}>
                {value} {value === '1' ? 'day' : 'days'}
              </option>
            ))}
          </select>
        </label>{' '}
        <button type="button" disabled={action.busy} onClick={share}>
          Create read-only link
        </button>
      </p>
      <ErrorBox error={action.error} />
      <p>
        <a href={`/v1/experiments/${experimentId}/results/export?format=csv`} download>
          Results (CSV)
        </a>{' '}
        ·{' '}
        <a href={`/v1/experiments/${experimentId}/results/history/export?format=csv`} download>
          History (CSV)
        </a>{' '}
        ·{' '}
        <a href={`/v1/experiments/${experimentId}/results/export?format=notebook`} download={`verdict-${experimentId}-notebook.json`}>
          Notebook (statistics and Python script)
        </a>
      </p>
    </section>
  );
}
