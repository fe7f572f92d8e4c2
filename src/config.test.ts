import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, NUMERIC_SETTINGS, parseBoundedInteger, type NumericSetting } from './config.js';

// Every numeric setting is plain decimal digits within its documented range, or the start stops
// with an error naming the variable: Number() alone reads all of these forms as numbers.
const NOT_PLAIN_INTEGERS = ['1e9', '9e99', '1e3', '0x10', '0b11', '0o7', ' 7 ', '7 ', '+7', '-1', '7.0', '1.5', 'Infinity', 'NaN', '7days', '١٢'];

const settings = Object.entries(NUMERIC_SETTINGS) as Array<[NumericSetting, { min: number; max: number }]>;

describe('numeric settings from the environment', () => {
  it.each(settings)('%s refuses every form that is not a plain integer, naming the variable', (name) => {
    for (const raw of NOT_PLAIN_INTEGERS) {
      expect(() => loadConfig({ [name]: raw }), `${name}=${JSON.stringify(raw)}`).toThrow(ConfigError);
      expect(() => loadConfig({ [name]: raw })).toThrow(new RegExp(`^${name} must be a whole number from`));
    }
  });

  it.each(settings)('%s takes its documented range and nothing beyond it', (name, { min, max }) => {
    const read = (raw: string) => loadConfig({ [name]: raw });
    expect(() => read(String(min))).not.toThrow();
    expect(() => read(String(max))).not.toThrow();
    expect(() => read(String(max + 1))).toThrow(`${name} must be a whole number from ${min} to ${max} (decimal digits only), got "${max + 1}"`);
    if (min > 0) expect(() => read(String(min - 1))).toThrow(ConfigError);
    expect(() => read('9007199254740993')).toThrow(ConfigError);
  });

  it('reads the value it was given', () => {
    const config = loadConfig({ VERDICT_EVENT_RETENTION_DAYS: '30', PORT: '0', VERDICT_JOB_CONCURRENCY: '007' });
    expect(config.eventRetentionDays).toBe(30);
    expect(config.port).toBe(0);
    expect(config.jobs.concurrency).toBe(7);
  });

  it('documents every range in the README', async () => {
    const { readFile } = await import('node:fs/promises');
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    for (const [name, { min, max }] of settings) {
      const row = readme.split('\n').find((line) => line.startsWith(`| \`${name}\` |`));
      expect(row, name).toBeDefined();
      expect(row, name).toContain(`${min}–${max}`);
    }
  });

  it('names the command-line option the same way', () => {
    expect(() => parseBoundedInteger('--port', '8e3', 0, 65_535)).toThrow(/^--port must be a whole number from 0 to 65535/);
    expect(parseBoundedInteger('--port', '8080', 0, 65_535)).toBe(8080);
  });
});
