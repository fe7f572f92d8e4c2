import type { TestServer } from '../support/server.js';

/** Creates a holdout through the API and starts it; returns the started holdout. */
export async function startedHoldout(server: TestServer, key: string, body: Record<string, unknown>) {
  const created = await server.request('POST', '/v1/holdouts', { key, body: { name: 'Quarter', unit_type: 'user', ...body } });
  if (created.status !== 201) throw new Error(`create holdout: ${created.status} ${created.text}`);
  const started = await server.request('POST', `/v1/holdouts/${created.body.id}/start`, { key });
  if (started.status !== 200) throw new Error(`start holdout: ${started.status} ${started.text}`);
  return started.body;
}

export const unitIds = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

/** Assigns each unit in an experiment through POST /v1/assign; returns the answers by unit id. */
export async function answersFor(server: TestServer, key: string, experimentKey: string, units: readonly string[]) {
  const answers = new Map<string, { variant: string | null; reason: string; holdout_id?: string }>();
  for (let start = 0; start < units.length; start += 100) {
    const round = await Promise.all(
      units.slice(start, start + 100).map((unit_id) => server.request('POST', '/v1/assign', { key, body: { experiment_key: experimentKey, unit_id } })),
    );
    for (const response of round) {
      if (response.status !== 200) throw new Error(`assign: ${response.status} ${response.text}`);
      answers.set(response.body.unit_id, response.body);
    }
  }
  return answers;
}

/** The units whose answer says a holdout held them out. */
export function heldOut(answers: Map<string, { reason: string }>): string[] {
  return [...answers].filter(([, answer]) => answer.reason === 'holdout').map(([unit]) => unit);
}
