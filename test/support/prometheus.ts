/** The samples of a Prometheus text exposition, by metric name and labels. */
export class Exposition {
  readonly #samples = new Map<string, number>();
  readonly names = new Set<string>();

  constructor(readonly text: string) {
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a line of the Prometheus text format: ${line}`);
      const [, name = '', labelText = '', value = ''] = match;
      const labels: Record<string, string> = {};
      for (const label of labelText.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
        labels[label[1] as string] = (label[2] as string).replace(/\\(.)/g, (_, char: string) => (char === 'n' ? '\n' : char));
      }
      this.#samples.set(sampleKey(name, labels), Number(value));
      this.names.add(name);
    }
  }

  /** The sample's value, or undefined when the exposition has no such series. */
  get(name: string, labels: Record<string, string> = {}): number | undefined {
    return this.#samples.get(sampleKey(name, labels));
  }

  /** The sample's value, 0 when the series does not exist yet (counters before their first event). */
  count(name: string, labels: Record<string, string> = {}): number {
    return this.get(name, labels) ?? 0;
  }
}

function sampleKey(name: string, labels: Record<string, string>): string {
  return `${name}${JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)))}`;
}

/** GET /metrics from a running Verdict, checked to be the Prometheus text format. */
export async function scrape(url: string): Promise<Exposition> {
  const response = await fetch(`${url}/metrics`);
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}: ${await response.text()}`);
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/plain; version=0.0.4')) throw new Error(`GET /metrics answered content-type ${type}`);
  return new Exposition(await response.text());
}
