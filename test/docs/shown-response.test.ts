import { describe, expect, it } from 'vitest';
import { shellBlocksOf } from './markdown-blocks.js';
import { commentedResponses, compareShown, parseElided } from './shown-response.js';

// The docs test is only as good as its comparison: these check that a page that shows the wrong
// status, variant or field fails, and that what legitimately differs (ids, times, elisions) passes.

const printed =
  '{"id":"01M8A65MZRPTMCZG6E66PMQG8V","status":"running","variants":[{"key":"control","weight":50},{"key":"green","weight":50}],' +
  '"started_at":"2026-11-25T20:25:52.244Z","warnings":[]}';

describe('docs test: comparing a shown response with what a block printed', () => {
  it('accepts other ids and timestamps, elided fields and items, and a string cut with …', () => {
    const shown =
      '{"id": "01M85DY82XDR4D7342SFKCQ0DE", "status": "running", "variants": [{"key": "control", …}, …], "started_at": "2026-11-24T00:05:32.835Z", …}';
    expect(compareShown(shown, printed)).toBeNull();
    expect(compareShown('{"status": "runn…"}', printed)).toBeNull();
  });

  it('names the field that differs: a status, a variant, a missing field, an item count', () => {
    expect(compareShown('{"status": "stopped", …}', printed)).toMatch(/\/status: expected "stopped", got "running"/);
    expect(compareShown('{"variants": [{"key": "blue", …}, …]}', printed)).toMatch(/no item matches/);
    expect(compareShown('{"stop_reason": null}', printed)).toMatch(/\/stop_reason: missing/);
    expect(compareShown('{"variants": [{"key": "control", …}]}', printed)).toMatch(/expected 1 items, got 2/);
  });

  it('matches several shown values in order against several printed ones, and text lines', () => {
    const twoProblems = '{"status":409,"detail":"a"}\nHTTP/1.1 204 No Content\n{"status":404,"detail":"b"}';
    expect(compareShown('{"status": 409, …}\n{"status": 404, …}', twoProblems)).toBeNull();
    expect(compareShown('{"status": 404, …}\n{"status": 409, …}', twoProblems)).toMatch(/matches nothing printed/);
    expect(compareShown('HTTP/1.1 204 No Content', twoProblems)).toBeNull();
    expect(compareShown('HTTP/1.1 202 Accepted', twoProblems)).toMatch(/was not printed/);
  });

  it('reads … as elided fields in objects and elided items in arrays', () => {
    expect(parseElided('{"a": [1, …], …}')).toEqual({ a: [1, '__docs_test_elided__'], __docs_test_elided__: 0 });
  });

  it('takes whole-line JSON comments of a block as its shown output', () => {
    expect(commentedResponses('curl x | jq -c .\n# {"variant":"control"}\n# not json\necho # {"inline":1}')).toBe('{"variant":"control"}');
  });

  it('finds shell blocks, the skip mark, and the response shown right below a block', () => {
    const page = [
      '<!-- docs-test: skip -->',
      '```sh',
      'npm start',
      '```',
      '',
      '```sh',
      'curl a',
      '```',
      '',
      '```json',
      '{"ok": true}',
      '```',
      '',
      '```bash',
      'curl b',
      '```',
      'prose between',
      '```json',
      '{"not": "its output"}',
      '```',
    ].join('\n');
    const blocks = shellBlocksOf('page.md', page);
    expect(blocks.map((b) => [b.line, b.skip, b.shown?.text ?? null])).toEqual([
      [2, true, null],
      [6, false, '{"ok": true}'],
      [14, false, null],
    ]);
  });
});
