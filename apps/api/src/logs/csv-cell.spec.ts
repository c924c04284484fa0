import { csvCell } from './csv-cell';

/** How a spreadsheet that splits on `separator` (and on line breaks, leniently) reads a row of cells. */
function fieldsAs(separator: string, cells: string[]): string[] {
  return cells.join(',').split(new RegExp(`[${separator === '|' ? '\\|' : separator}\\r\\n]`));
}

const FORMULA = /^ *[=+\-@\t\r]/;

describe('csvCell', () => {
  it.each([
    ['=1+1', `"'=1+1"`],
    ['+1', `"'+1"`],
    ['-1', `"'-1"`],
    ['@SUM(A1)', `"'@SUM(A1)"`],
    ['\t=1', `"'\t'=1"`],
    ['x;=1+1', `"x;'=1+1"`],
    ['x; =1+1', `"x; '=1+1"`],
    ['x|@cmd', `"x|'@cmd"`],
    ['x\t-2', `"x\t'-2"`],
    ['line\n=HYPERLINK("http://e")', `"line\n'=HYPERLINK(""http://e"")"`],
    ['a, +b', `"a, '+b"`],
    ['a\r\n=b', `"a\r\n'=b"`],
  ])('%j becomes %j', (value, expected) => {
    expect(csvCell(value)).toBe(expected);
  });

  it('leaves ordinary cells as they are, quoting only what RFC 4180 needs', () => {
    expect(csvCell('Proxy updated')).toBe('Proxy updated');
    expect(csvCell('2026-11-26T10:00:00.000Z')).toBe('2026-11-26T10:00:00.000Z');
    expect(csvCell('a-b=c')).toBe('a-b=c');
    expect(csvCell('say "hi", then go')).toBe('"say ""hi"", then go"');
    expect(csvCell(42)).toBe('42');
    expect(csvCell(undefined)).toBe('');
  });

  it.each([',', ';', '\t', '|'])('no field of a row is a formula to a reader splitting on %j', (separator) => {
    const nasty = ['x;=1+1', 'a,=b', 'a\t@c', 'p|+q', 'n\n-1', ' =lead', 'r\r=s', '\t\t=t', 'u;\t=v'];
    const row = ['1', ...nasty.map(csvCell), 'end'];
    for (const field of fieldsAs(separator, row)) {
      // A field may open with the quote of a quoted cell: a reader that honours it sees the cell's own start.
      expect(field.replace(/^"/, '')).not.toMatch(FORMULA);
    }
  });
});
