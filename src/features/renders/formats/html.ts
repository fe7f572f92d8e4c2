// The html format: the rendered Markdown through marked (GitHub-flavoured), merge values put back
// HTML-escaped, wrapped in a small standalone document.
import { Marked, type Token } from 'marked';
import { substitute, type ExecutedTemplate } from '../../templates/engine.js';

/** One configured instance: the global `marked` object is shared by every importer. */
export const markdown = new Marked({ gfm: true, breaks: false, async: false });

const STYLE = [
  'body{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;line-height:1.5;color:#1f2328;max-width:48rem;margin:2rem auto;padding:0 1rem}',
  'table{border-collapse:collapse;margin:1rem 0}',
  'th,td{border:1px solid #d0d7de;padding:.35rem .75rem;text-align:left}',
  'code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em}',
  'blockquote{margin:1rem 0;padding:0 1rem;color:#59636e;border-left:.25rem solid #d0d7de}',
].join('\n');

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** The escaping marked applies to text, so values and body text read alike in the source. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}

export function renderHtml(executed: ExecutedTemplate, tokens: Token[], title: string): string {
  const html = markdown.parser(tokens) as string;
  // Addresses hold no placeholders any more (policeTokens put their values back, policed).
  const content = substitute(html, executed.merged, escapeHtml);
  return [
    '<!DOCTYPE html>',
    '<html>',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>\n${STYLE}\n</style>`,
    '</head>',
    '<body>',
    content.trimEnd(),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
