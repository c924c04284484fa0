// The separators a spreadsheet may be told (or guess) to split on: RFC 4180's comma, the semicolon of locales whose
// decimal mark is a comma, tab and pipe; and line breaks, where a lenient reader starts a new row mid-cell.
const PIECE_START = new Set([',', ';', '\t', '|', '\r', '\n']);
// What a spreadsheet runs as a formula when a field starts with it (OWASP, "CSV Injection").
const FORMULA_START = new Set(['=', '+', '-', '@', '\t', '\r']);
const NEEDS_QUOTES = /[",;\t|\r\n]/;

/**
 * One CSV cell, safe to open in a spreadsheet whatever separator it splits on. RFC 4180 quoting protects a cell only
 * from a reader that splits on commas: one that splits on `;` reads `x;=1+1` as two fields, the second a formula. So
 * every piece of the cell that could start a field (its start, and whatever follows a `,` `;` tab `|` or line break,
 * spaces skipped) gets a `'` before a formula character (= + - @ tab CR), and a cell holding any separator or formula
 * is quoted. CSV is for reading; the NDJSON export is the exact, verifiable one.
 */
export function csvCell(value: string | number | undefined): string {
  if (value === undefined) return '';
  const text = String(value);
  let out = '';
  let atPieceStart = true;
  let defused = false;
  for (const char of text) {
    if (atPieceStart && FORMULA_START.has(char)) {
      out += "'";
      defused = true;
    }
    out += char;
    if (PIECE_START.has(char)) atPieceStart = true;
    else if (char !== ' ') atPieceStart = false;
  }
  return defused || NEEDS_QUOTES.test(out) ? `"${out.replace(/"/g, '""')}"` : out;
}
