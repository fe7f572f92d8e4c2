// Markdown tables drawn directly with pdfkit text measurement: column widths from their
// content, alignment from the Markdown (`---:`), the header repeated after a page break.
// (pdfkit's own table() is several times slower for the same result.)
import type PDFDocument from 'pdfkit';

type Doc = InstanceType<typeof PDFDocument>;
type Align = 'left' | 'center' | 'right';

export interface TableBox {
  x: number;
  width: number;
  fontSize: number;
}

export interface TableText {
  header: string[];
  rows: string[][];
  align: Array<Align | null>;
}

const PADDING_X = 5;
const PADDING_Y = 3;
const MIN_COLUMN = 28;
const BORDER = '#999999';

/** Natural widths, shrunk proportionally (never below a minimum) when they do not fit. */
function columnWidths(doc: Doc, table: TableText, box: TableBox): number[] {
  const natural = table.header.map((_, column) => {
    doc.font('Helvetica-Bold');
    let widest = doc.widthOfString(table.header[column] ?? '');
    doc.font('Helvetica');
    for (const row of table.rows) widest = Math.max(widest, doc.widthOfString(row[column] ?? ''));
    return widest + 2 * PADDING_X + 1;
  });
  const total = natural.reduce((sum, width) => sum + width, 0);
  if (total <= box.width) return natural;
  return natural.map((width) => Math.max(MIN_COLUMN, (width / total) * box.width));
}

function rowHeight(doc: Doc, cells: string[], widths: number[], bold: boolean): number {
  doc.font(bold ? 'Helvetica-Bold' : 'Helvetica');
  const heights = cells.map((cell, column) => doc.heightOfString(cell || ' ', { width: (widths[column] ?? MIN_COLUMN) - 2 * PADDING_X }));
  return Math.max(...heights) + 2 * PADDING_Y;
}

function drawRow(doc: Doc, cells: string[], table: TableText, widths: number[], top: number, height: number, box: TableBox, bold: boolean): number {
  const totalWidth = widths.reduce((sum, width) => sum + width, 0);
  if (bold) doc.rect(box.x, top, totalWidth, height).fill('#eeeeee');
  doc.fillColor('black').font(bold ? 'Helvetica-Bold' : 'Helvetica');
  let x = box.x;
  cells.forEach((cell, column) => {
    const width = widths[column] ?? MIN_COLUMN;
    doc.text(cell, x + PADDING_X, top + PADDING_Y, { width: width - 2 * PADDING_X, align: table.align[column] ?? 'left', lineBreak: true });
    x += width;
  });
  doc.lineWidth(0.5).strokeColor(BORDER).rect(box.x, top, totalWidth, height).stroke();
  x = box.x;
  for (const width of widths.slice(0, -1)) {
    x += width;
    doc
      .moveTo(x, top)
      .lineTo(x, top + height)
      .stroke();
  }
  return top + height;
}

export function drawTable(doc: Doc, table: TableText, box: TableBox): void {
  doc.fontSize(box.fontSize);
  const widths = columnWidths(doc, table, box);
  const headerHeight = rowHeight(doc, table.header, widths, true);
  const heights = table.rows.map((row) => rowHeight(doc, row, widths, false));
  const bottom = doc.page.height - doc.page.margins.bottom;
  let y = drawRow(doc, table.header, table, widths, doc.y, headerHeight, box, true);
  table.rows.forEach((row, index) => {
    const height = heights[index] ?? 0;
    if (y + height > bottom) {
      doc.addPage();
      y = drawRow(doc, table.header, table, widths, doc.page.margins.top, headerHeight, box, true);
    }
    y = drawRow(doc, row, table, widths, y, height, box, false);
  });
  doc.x = box.x;
  doc.y = y;
}
