import type { Scenario } from '../lib/harness.js';

export const currentWorkspace: Scenario = {
  name: 'workspaces.current',
  description: 'GET /v1/workspaces/current with a valid server key (auth cache hit + one indexed read)',
  async prepare(server) {
    return { path: '/v1/workspaces/current', headers: { authorization: `Bearer ${server.key}` } };
  },
};
