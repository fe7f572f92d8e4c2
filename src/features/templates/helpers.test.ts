import Handlebars from 'handlebars';
import { describe, expect, it } from 'vitest';
import { executeTemplate, substitute } from './engine.js';
import { RenderError } from './helpers.js';

/** Runs a body and puts the printed values back verbatim. */
function run(body: string, data: unknown = {}): string {
  const executed = executeTemplate(body, data);
  return substitute(executed.source, executed.merged, (value) => value);
}

describe('template helpers', () => {
  it('formats dates in UTC by default, in a named zone on request', () => {
    const data = { at: '2024-03-01T23:30:05Z', day: '2024-03-01', ms: Date.UTC(2024, 11, 25, 8, 5) };
    expect(run('{{formatDate at}}', data)).toBe('2024-03-01');
    expect(run('{{formatDate at "D MMMM YYYY, HH:mm:ss"}}', data)).toBe('1 March 2024, 23:30:05');
    expect(run('{{formatDate at "DD/MM/YY H:mm" tz="Europe/Paris"}}', data)).toBe('02/03/24 0:30');
    expect(run('{{formatDate day "MMM D [at] HH:mm"}}', data)).toBe('Mar 1 at 00:00');
    expect(run('{{formatDate ms "YYYY-MM-DD HH:mm"}}', data)).toBe('2024-12-25 08:05');
    expect(() => run('{{formatDate at}}', { at: 'soon' })).toThrow(new RenderError('formatDate: "soon" is not a date (ISO 8601 text or epoch milliseconds)'));
    expect(() => run('{{formatDate at tz="Mars/Base"}}', data)).toThrow(RenderError);
  });

  it('formats numbers and currencies with a fixed locale', () => {
    const data = { n: 1234567.891, s: '9.5', price: 46.8 };
    expect(run('{{formatNumber n}}', data)).toBe('1,234,567.891');
    expect(run('{{formatNumber n 2}}', data)).toBe('1,234,567.89');
    expect(run('{{formatNumber s 2}}', data)).toBe('9.50');
    expect(run('{{formatNumber n 0 locale="de-DE"}}', data)).toBe('1.234.568');
    expect(run('{{formatCurrency price "EUR"}}', data)).toBe('€46.80');
    expect(run('{{formatCurrency price "usd"}}', data)).toBe('$46.80');
    expect(run('{{formatCurrency price "JPY"}}', data)).toBe('¥47');
    expect(() => run('{{formatNumber n}}', { n: 'abc' })).toThrow(/formatNumber: "abc" is not a number/);
    expect(() => run('{{formatCurrency price "EURO"}}', data)).toThrow(/ISO 4217/);
  });

  it('changes case and falls back to a default', () => {
    const data = { name: 'Ada Lovelace', empty: '', zero: 0 };
    expect(run('{{uppercase name}} {{lowercase name}}', data)).toBe('ADA LOVELACE ada lovelace');
    expect(run('{{default missing "n/a"}}|{{default empty "n/a"}}|{{default zero "n/a"}}|{{default name "n/a"}}', data)).toBe('n/a|n/a|0|Ada Lovelace');
    expect(run('{{uppercase (default missing "none")}}', data)).toBe('NONE');
  });
});

describe('template execution', () => {
  it('never reads prototypes', () => {
    const body = '[{{constructor}}][{{__proto__}}][{{lookup this "constructor"}}][{{name.constructor.name}}][{{#with __proto__}}{{toString}}{{/with}}]';
    expect(run(body, { name: 'x' })).toBe('[][][][][]');
  });

  it('applies whitespace control exactly as Handlebars does', () => {
    const body = '# List\n{{#each items}}\n  - {{this}}\n{{else}}\nnone\n{{/each}}\n{{~#if flag}}  flagged  {{/if~}}\nend {{{raw}}}';
    for (const data of [
      { items: ['a', 'b'], flag: true, raw: '*x*' },
      { items: [], flag: false },
    ]) {
      expect(run(body, data)).toBe(Handlebars.create().compile(body)(data));
    }
  });

  it('prints values Handlebars-style and keeps triple-stash as Markdown source', () => {
    const executed = executeTemplate('{{a}}|{{b}}|{{c}}|{{d}}|{{{e}}}', { a: null, b: false, c: 0, d: [1, 2], e: '**bold**' });
    expect(executed.merged.values).toEqual(['', 'false', '0', '1,2']);
    expect(executed.source).toMatch(/^vm[a-z]{10}0x\|vm[a-z]{10}1x\|vm[a-z]{10}2x\|vm[a-z]{10}3x\|\*\*bold\*\*$/);
  });

  it('turns runtime failures into render errors', () => {
    expect(() => run('{{#each items}}{{/each}}', { items: 3 })).not.toThrow();
    expect(() => run('{{formatNumber}}')).toThrow(RenderError);
  });
});
