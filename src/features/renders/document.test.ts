import { describe, expect, it } from 'vitest';
import { pdfText } from '../../../test/templates/pdf-text.js';
import { executeTemplate } from '../templates/engine.js';
import { RenderError } from '../templates/helpers.js';
import { MAX_SOURCE_CHARS, renderDocument, type RenderedOutput } from './document.js';
import { markdown } from './formats/html.js';
import { escapeMarkdown, renderMarkdown } from './formats/markdown.js';
import { toWinAnsi } from './formats/win-ansi.js';

async function renderAll(body: string, data: unknown, createdAt = Date.UTC(2024, 0, 1)) {
  const outputs = await renderDocument({ body, data, formats: ['html', 'text', 'markdown', 'pdf'], createdAt });
  const byFormat = Object.fromEntries(outputs.map((output: RenderedOutput) => [output.format, output.content])) as Record<string, Buffer>;
  return { html: byFormat.html!.toString(), text: byFormat.text!.toString(), markdown: byFormat.markdown!.toString(), pdf: byFormat.pdf! };
}

function htmlBody(page: string): string {
  return page.slice(page.indexOf('<body>\n') + 7, page.indexOf('\n</body>'));
}

// Bare URLs are left out: a Markdown renderer may autolink them, which changes no text.
const NASTY = [
  '<img src=x onerror=alert(1)>',
  '*em* _u_ `code` [l](x) "q" \'s\'',
  '# heading',
  '- item',
  '12. twelve',
  '> quote',
  'a | b',
  '&amp; &lt;',
  '\\*',
  'line\n# two',
];

describe('markdown escaping', () => {
  it('escapes inline syntax anywhere and block syntax at the start of a line only', () => {
    expect(escapeMarkdown('INV-2024-0042 costs 46.8 & more', false)).toBe('INV-2024-0042 costs 46.8 & more');
    expect(escapeMarkdown('*a* _b_ <c> [d] `e` f|g ~h~ \\', false)).toBe('\\*a\\* \\_b\\_ \\<c\\> \\[d\\] \\`e\\` f\\|g \\~h\\~ \\\\');
    expect(escapeMarkdown('# h', false)).toBe('# h');
    expect(escapeMarkdown('# h', true)).toBe('\\# h');
    expect(escapeMarkdown('- x', true)).toBe('\\- x');
    expect(escapeMarkdown('12. x', true)).toBe('12\\. x');
    expect(escapeMarkdown('ok\n+ y\n3) z', false)).toBe('ok\n\\+ y\n3\\) z');
    expect(escapeMarkdown('&copy; &#169; & x', false)).toBe('\\&copy; \\&#169; & x');
  });

  it('reads back as the same text: the markdown output renders to the html output', async () => {
    const body = [
      '# {{v0}}',
      '',
      '{{v1}} and {{v2}}',
      '',
      '{{v3}}',
      '',
      '- {{v4}}',
      '- {{v5}}',
      '',
      '> {{v6}}',
      '',
      '| a | b |',
      '|---|---|',
      '| {{v7}} | {{v8}} |',
      '',
      '{{v9}}',
    ].join('\n');
    const data = Object.fromEntries(NASTY.map((value, index) => [`v${index}`, value]));
    const { html, markdown: source } = await renderAll(body, data);
    expect(markdown.parse(source)).toBe(`${htmlBody(html)}\n`);
    expect(html).not.toMatch(/<img|<h1>heading|<em>em/);
  });

  it('encodes values in link addresses and refuses scripting schemes', async () => {
    const body = '[pay]({{url}}) [home]({{bad}}) [doc](https://x.test/{{path}})';
    const { html, markdown: source, text } = await renderAll(body, { url: 'https://pay.test/a b?x=1&y=2', bad: 'javascript:alert(1)', path: 'a (1).pdf' });
    expect(htmlBody(html)).toBe(
      '<p><a href="https://pay.test/a%20b?x=1&amp;y=2">pay</a> <a href="#">home</a> <a href="https://x.test/a%20(1).pdf">doc</a></p>',
    );
    expect(source).toBe('[pay](https://pay.test/a%20b?x=1&y=2) [home](#) [doc](https://x.test/a%20%281%29.pdf)');
    // Plain text links nothing; it shows the address the other formats link to.
    expect(text).toBe('pay (https://pay.test/a b?x=1&y=2) home (#) doc (https://x.test/a (1).pdf)\n');
  });
});

describe('document formats', () => {
  it('gives readable plain text: aligned tables, numbered and nested lists, link addresses', async () => {
    const body =
      '## Items\n\n| Name | Qty |\n|---|--:|\n{{#each items}}| {{name}} | {{qty}} |\n{{/each}}\n\n3. three\n4. four\n   - nested **bold**\n\nMail [us](mailto:{{mail}}) or {{mail}}.\n\n---\n\n<p>Raw &amp; <b>html</b></p>';
    const { text } = await renderAll(body, {
      items: [
        { name: 'Widget', qty: 2 },
        { name: 'Gadget long name', qty: 10 },
      ],
      mail: 'a@b.test',
    });
    expect(text).toBe(
      'Items\n\nName              Qty\n----------------  ---\nWidget            2\nGadget long name  10\n\n3. three\n4. four\n   - nested bold\n\nMail us (a@b.test) or a@b.test.\n\n----------\n\nRaw & html\n',
    );
  });

  it('draws a PDF whose text a reader extracts, in the standard fonts’ character set', async () => {
    const body = '# Résumé for {{name}}\n\n**Bold** and _italic_ and `code`, {{note}}.\n\n1. first\n2. second\n\n| A | B |\n|---|---|\n| {{cell}} | 2 |';
    const { pdf } = await renderAll(body, { name: 'Dvořák', note: 'check ✓ “quoted” €5', cell: 'Zoë' });
    const extracted = await pdfText(pdf);
    for (const expected of ['Résumé for Dvorák', 'Bold', 'italic', 'code', 'check ? “quoted” €5', 'first', 'second', 'Zoë'])
      expect(extracted).toContain(expected);
    expect(toWinAnsi('Łódź 漢 naïve\u202f€')).toBe('?ódz ? naïve €');
  });

  it('gives the same PDF bytes for the same render time, and a different one otherwise', async () => {
    const one = await renderAll('# {{t}}\n\ntext', { t: 'Same' }, 1_700_000_000_000);
    const two = await renderAll('# {{t}}\n\ntext', { t: 'Same' }, 1_700_000_000_000);
    const later = await renderAll('# {{t}}\n\ntext', { t: 'Same' }, 1_700_000_000_001);
    expect(one.pdf.equals(two.pdf)).toBe(true);
    expect(one.pdf.equals(later.pdf)).toBe(false);
  });

  it('refuses documents that loops blow up past the size limit', async () => {
    const big = 'x'.repeat(1_000);
    const rows = Array.from({ length: MAX_SOURCE_CHARS / 1_000 + 1 }, () => big);
    await expect(renderDocument({ body: '{{#each rows}}{{this}}{{/each}}', data: { rows }, formats: ['text'], createdAt: 0 })).rejects.toThrow(RenderError);
  });

  it('puts markdown output values back with the right escaping for their position', () => {
    const executed = executeTemplate('{{a}}\n\n> {{a}}\n\nx {{a}}', { a: '# not a heading' });
    expect(renderMarkdown(executed)).toBe('\\# not a heading\n\n> \\# not a heading\n\nx # not a heading');
  });
});
