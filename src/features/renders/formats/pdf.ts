// The pdf format: pdfkit draws the rendered Markdown's tokens with the standard PDF fonts
// (Helvetica, Courier), so no font files are needed and a reader can extract the text. The
// standard fonts encode WinAnsi (Latin-1 plus typographic marks); other characters are
// transliterated where they have a Latin base letter and shown as "?" otherwise.
import PDFDocument from 'pdfkit';
import type { Token, Tokens } from 'marked';
import { substitute, type MergedValues } from '../../templates/engine.js';
import { htmlToText, toRuns, type Run } from './inline.js';
import { drawTable } from './pdf-table.js';
import { encodeUrlText } from './urls.js';
import { toWinAnsi } from './win-ansi.js';

type Doc = InstanceType<typeof PDFDocument>;

interface Frame {
  doc: Doc;
  merged: MergedValues;
  /** Left edge and width of the current column (lists and quotes indent it). */
  x: number;
  width: number;
}

const MARGIN = 56;
const BODY_SIZE = 10.5;
const HEADING_SIZES = [20, 16, 13.5, 12, 11, 10.5];
const LIST_INDENT = 16;

function fontOf(run: Run, bold: boolean): string {
  if (run.code) return run.bold || bold ? 'Courier-Bold' : 'Courier';
  const strong = run.bold || bold;
  if (run.italic) return strong ? 'Helvetica-BoldOblique' : 'Helvetica-Oblique';
  return strong ? 'Helvetica-Bold' : 'Helvetica';
}

function values(text: string, frame: Frame): string {
  return toWinAnsi(substitute(text, frame.merged, (value) => value));
}

/** Links were policed with their values put back (policeTokens); only the URL encoding is left. */
function linkAddress(link: string): string {
  return encodeUrlText(link);
}

/** Draws styled runs as one flowing paragraph at the frame's column. */
function drawRuns(frame: Frame, runs: Run[], size: number, bold = false): void {
  const { doc } = frame;
  const pieces = runs.map((run) => ({ ...run, text: values(run.text, frame) })).filter((run) => run.text !== '');
  if (pieces.length === 0) return;
  doc.fontSize(size).fillColor('black');
  pieces.forEach((run, index) => {
    const options = {
      continued: index < pieces.length - 1,
      width: frame.width,
      lineGap: 2,
      underline: Boolean(run.link),
      strike: Boolean(run.strike),
      link: run.link ? linkAddress(run.link) : null,
    };
    doc.font(fontOf(run, bold));
    if (index === 0) doc.text(run.text, frame.x, doc.y, options);
    else doc.text(run.text, options);
  });
}

function drawHeading(frame: Frame, heading: Tokens.Heading): void {
  frame.doc.moveDown(0.4);
  drawRuns(frame, toRuns(heading.tokens), HEADING_SIZES[heading.depth - 1] ?? BODY_SIZE, true);
  frame.doc.moveDown(0.3);
}

function drawList(frame: Frame, list: Tokens.List): void {
  const { doc } = frame;
  const start = typeof list.start === 'number' ? list.start : 1;
  const markerWidth = list.ordered ? LIST_INDENT + 6 : LIST_INDENT;
  list.items.forEach((item, index) => {
    const top = doc.y;
    doc.font('Helvetica').fontSize(BODY_SIZE).fillColor('black');
    doc.text(list.ordered ? `${start + index}.` : '\u2022', frame.x, top, { width: markerWidth, lineBreak: false });
    doc.y = top;
    const inner: Frame = { ...frame, x: frame.x + markerWidth, width: frame.width - markerWidth };
    for (const token of item.tokens) drawBlock(inner, token, true);
  });
  doc.moveDown(0.4);
}

function drawTableToken(frame: Frame, table: Tokens.Table): void {
  const cell = (cell: Tokens.TableCell) =>
    values(
      toRuns(cell.tokens)
        .map((run) => run.text)
        .join(''),
      frame,
    );
  drawTable(
    frame.doc,
    { header: table.header.map(cell), rows: table.rows.map((row) => row.map(cell)), align: table.align },
    { x: frame.x, width: frame.width, fontSize: BODY_SIZE - 1 },
  );
  frame.doc.moveDown(0.6);
}

function drawCode(frame: Frame, code: Tokens.Code): void {
  const { doc } = frame;
  doc
    .font('Courier')
    .fontSize(BODY_SIZE - 1.5)
    .fillColor('#333333');
  doc.text(values(code.text, frame), frame.x + 10, doc.y, { width: frame.width - 10, lineGap: 1 });
  doc.fillColor('black').moveDown(0.6);
}

function drawRule(frame: Frame): void {
  const { doc } = frame;
  const y = doc.y + 4;
  doc
    .moveTo(frame.x, y)
    .lineTo(frame.x + frame.width, y)
    .lineWidth(0.5)
    .strokeColor('#999999')
    .stroke();
  doc.y = y + 8;
}

function drawBlock(frame: Frame, token: Token, tight = false): void {
  const gap = tight ? 0.15 : 0.6;
  switch (token.type) {
    case 'heading':
      return drawHeading(frame, token as Tokens.Heading);
    case 'paragraph':
    case 'text': {
      const text = token as Tokens.Paragraph;
      drawRuns(frame, text.tokens ? toRuns(text.tokens) : [{ text: text.text }], BODY_SIZE);
      frame.doc.moveDown(gap);
      return;
    }
    case 'list':
      return drawList(frame, token as Tokens.List);
    case 'table':
      return drawTableToken(frame, token as Tokens.Table);
    case 'blockquote':
      for (const inner of (token as Tokens.Blockquote).tokens) drawBlock({ ...frame, x: frame.x + 14, width: frame.width - 14 }, inner);
      return;
    case 'code':
      return drawCode(frame, token as Tokens.Code);
    case 'hr':
      return drawRule(frame);
    case 'html':
      drawRuns(frame, [{ text: htmlToText((token as Tokens.HTML).text).trim() }], BODY_SIZE);
      frame.doc.moveDown(gap);
      return;
    default:
      // 'space' and anything unknown draw nothing.
      return;
  }
}

export interface PdfOptions {
  title: string;
  /** The render's creation time: fixed metadata makes the same render give the same bytes. */
  createdAt: number;
}

export async function renderPdf(tokens: Token[], merged: MergedValues, options: PdfOptions): Promise<Buffer> {
  const created = new Date(options.createdAt);
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    info: { Title: toWinAnsi(options.title), Producer: 'Verdict', Creator: 'Verdict', CreationDate: created, ModDate: created },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    doc.on('end', () => resolve());
    doc.on('error', reject);
  });
  const frame: Frame = { doc, merged, x: MARGIN, width: doc.page.width - 2 * MARGIN };
  for (const token of tokens) drawBlock(frame, token);
  doc.end();
  await ended;
  return Buffer.concat(chunks);
}
