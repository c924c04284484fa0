'use strict';
// Progress on stderr for the benchmarks: a bar redrawn in place on a terminal, a line every few seconds into a file.

const stderr = (line) => process.stderr.write(`${line}\n`);
// On a terminal the bar redraws in place; into a file or a pipe it is a line at most every BAR_INTERVAL_MS (and the
// final one), not one per update.
const TTY = Boolean(process.stderr.isTTY);
const BAR_INTERVAL_MS = 5000;
let barOpen = false;
let barPrinted = { label: '', at: 0 };
function bar(label, done, total, started) {
  const width = 30;
  const ratio = total > 0 ? Math.min(1, done / total) : 1;
  if (!TTY) {
    const now = Date.now();
    if (ratio < 1 && barPrinted.label === label && now - barPrinted.at < BAR_INTERVAL_MS) return;
    barPrinted = { label, at: now };
  }
  const filled = Math.round(ratio * width);
  const elapsed = (Date.now() - started) / 1000;
  const eta = ratio > 0 ? elapsed / ratio - elapsed : 0;
  const text =
    `${label.padEnd(24)} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}% ` +
    `${fmt(done)}/${fmt(total)} ${elapsed.toFixed(0)}s${ratio < 1 ? ` eta ${eta.toFixed(0)}s` : ''}`;
  if (!TTY) return stderr(text);
  process.stderr.write(`\r${text}   `);
  barOpen = ratio < 1;
  if (!barOpen) process.stderr.write('\n');
}
function phase(label) {
  if (barOpen) process.stderr.write('\n');
  barOpen = false;
  stderr(`• ${label}`);
}
function fmt(n) {
  return n >= 1e6 ? `${(n / 1e6).toFixed(n % 1e6 ? 1 : 0)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(n % 1e3 ? 1 : 0)}k` : String(n);
}
module.exports = { bar, fmt, phase, stderr };
