// One render: the frozen body runs once through Handlebars, and each requested format is
// derived from that one Markdown result (docs/templates.md, "Formats").
import type { RenderFormat } from '../../db/tables/templates.js';
import { executeTemplate } from '../templates/engine.js';
import { RenderError } from '../templates/helpers.js';
import { policeTokens } from './formats/address-policy.js';
import { markdown, renderHtml } from './formats/html.js';
import { renderMarkdown } from './formats/markdown.js';
import { renderPdf } from './formats/pdf.js';
import { documentTitle, renderText } from './formats/text.js';

export const RENDER_FORMATS: readonly RenderFormat[] = ['html', 'text', 'markdown', 'pdf'];

export const CONTENT_TYPES: Readonly<Record<RenderFormat, string>> = {
  html: 'text/html; charset=utf-8',
  text: 'text/plain; charset=utf-8',
  markdown: 'text/markdown; charset=utf-8',
  pdf: 'application/pdf',
};

/** A body whose loops multiply data past this is a mistake, not a document. */
export const MAX_SOURCE_CHARS = 5_000_000;

export interface RenderedOutput {
  format: RenderFormat;
  contentType: string;
  content: Buffer;
}

export interface DocumentRequest {
  body: string;
  data: unknown;
  formats: readonly RenderFormat[];
  /** Epoch ms: the PDF's creation date, so the same render always gives the same bytes. */
  createdAt: number;
}

/** Renders every requested format; throws `RenderError` when the body or data cannot render. */
export async function renderDocument(request: DocumentRequest): Promise<RenderedOutput[]> {
  const executed = executeTemplate(request.body, request.data);
  const size = executed.merged.values.reduce((total, value) => total + value.length, executed.source.length);
  if (size > MAX_SOURCE_CHARS) {
    throw new RenderError(`the rendered document exceeds ${MAX_SOURCE_CHARS} characters`);
  }
  const tokens = markdown.lexer(executed.source);
  policeTokens(tokens, executed.merged, (all, visit) => markdown.walkTokens(all, visit));
  const title = documentTitle(tokens, executed.merged);
  const outputs: RenderedOutput[] = [];
  for (const format of request.formats) {
    let content: Buffer;
    if (format === 'html') content = Buffer.from(renderHtml(executed, tokens, title), 'utf8');
    else if (format === 'markdown') content = Buffer.from(renderMarkdown(executed), 'utf8');
    else if (format === 'text') content = Buffer.from(renderText(tokens, executed.merged), 'utf8');
    else content = await renderPdf(tokens, executed.merged, { title, createdAt: request.createdAt });
    outputs.push({ format, contentType: CONTENT_TYPES[format], content });
  }
  return outputs;
}
