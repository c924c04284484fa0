import { GROUPS, Reader, Variable, VARIABLES } from './schema';

// `.env.example` and the README's configuration table, written from the schema by `npm run config:docs`
// (scripts/generate-config-docs.js); config-docs.spec.ts fails when the committed files differ from what this writes.

export const TABLE_START = '<!-- config:start -->';
export const TABLE_END = '<!-- config:end -->';
const GENERATED = 'Generated from libs/config/src/schema.ts by `npm run config:docs`: edit the schema, not this';
const WIDTH = 120;

/** One documented variable: the schema's, each `fromFile` one followed by its `<NAME>_FILE`. */
export interface DocumentedVariable {
  name: string;
  group: keyof typeof GROUPS;
  readBy: Reader;
  /** Markdown, one line. */
  meaning: string;
  /** Markdown, one line. */
  shownDefault: string;
  /** The value `.env.example` sets, when the default is one constant; else undefined (the line is commented out). */
  value?: string;
  /** What the commented-out line shows: empty for a secret. */
  example: string;
}

export function documentedVariables(variables: readonly Variable[] = VARIABLES): DocumentedVariable[] {
  return variables.flatMap((variable) => {
    const { name, group, readBy, meaning, secret } = variable;
    if (secret && variable.example !== undefined) throw new Error(`${name}: a secret gets no example value`);
    const fallback = variable.kind?.fallback;
    const constant = fallback === undefined || typeof fallback === 'function' ? undefined : fallback;
    const shownDefault = variable.shownDefault ?? (constant === undefined ? 'unset' : Array.isArray(constant) ? 'empty' : `\`${String(constant)}\``);
    if (typeof fallback === 'function' && variable.shownDefault === undefined) throw new Error(`${name}: a computed default needs shownDefault`);
    const value = constant === undefined ? undefined : Array.isArray(constant) ? constant.join(',') : String(constant);
    const own: DocumentedVariable = { name, group, readBy, meaning, shownDefault, value, example: variable.example ?? '' };
    if (!variable.fromFile) return [own];
    const file: DocumentedVariable = {
      name: `${name}_FILE`,
      group,
      readBy,
      meaning: `\`${name}\` read from this file instead (Docker and Kubernetes secrets); one trailing newline is dropped; setting both is an error`,
      shownDefault: 'unset',
      example: `/run/secrets/${name.toLowerCase().replace(/_/g, '-')}`,
    };
    return [own, file];
  });
}

const READERS: Record<Reader, string> = { api: 'api', worker: 'worker', both: 'api, worker', cli: 'cli' };

/** The README's table, markers included. */
export function renderConfigTable(variables: readonly Variable[] = VARIABLES): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  const lines = [TABLE_START, `<!-- ${GENERATED} table. -->`, '', '| Variable | Default | Read by | Meaning |', '|---|---|---|---|'];
  let group: string | undefined;
  for (const row of documentedVariables(variables)) {
    if (row.group !== group) lines.push(`| **${GROUPS[(group = row.group)]}** | | | |`);
    lines.push(`| \`${row.name}\` | ${cell(row.shownDefault)} | ${READERS[row.readBy]} | ${cell(row.meaning)} |`);
  }
  lines.push('', TABLE_END);
  return lines.join('\n');
}

/** `readme` with the text between the markers replaced by the table; throws when the markers are missing. */
export function withConfigTable(readme: string, variables: readonly Variable[] = VARIABLES): string {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`README.md has no ${TABLE_START} ... ${TABLE_END} section for the configuration table`);
  return readme.slice(0, start) + renderConfigTable(variables) + readme.slice(end + TABLE_END.length);
}

/** `.env.example`: grouped, each variable under its meaning; a constant default set, anything else commented out. */
export function renderEnvExample(variables: readonly Variable[] = VARIABLES): string {
  const lines = comment(
    `Gatehouse's configuration: every variable it reads, by group. A variable unset, blank or commented out takes its default. ${GENERATED} file. ` +
      "In brackets, the processes that read it: the api runs the worker's jobs itself when there is no REDIS_URL, and the gatehouse CLI reads the database's and the vault's variables as well.",
  );
  let group: string | undefined;
  for (const row of documentedVariables(variables)) {
    if (row.group !== group) lines.push('', `# ---- ${GROUPS[(group = row.group)]} ----`);
    lines.push('', ...comment(`[${READERS[row.readBy]}] ${capitalised(plain(row.meaning))}.${row.value === undefined ? unsetMeans(row.shownDefault) : ''}`));
    lines.push(row.value === undefined ? `# ${row.name}=${row.example}` : `${row.name}=${row.value}`);
  }
  return `${lines.join('\n')}\n`;
}

/** What a commented-out variable's line adds: its line shows it is unset, so only what that means. */
function unsetMeans(shownDefault: string): string {
  if (shownDefault === 'unset') return '';
  const text = plain(shownDefault);
  return text.startsWith('unset: ') ? ` Unset: ${text.slice('unset: '.length)}.` : ` Default: ${text}.`;
}

/** Markdown as plain text: links as `text: target`, no code or emphasis marks (a `*` inside code stays). */
function plain(markdown: string): string {
  return markdown
    .replace(/\[([^\]]+)\]\(([^)]+)\)/g, '$1: $2')
    .split(/(`[^`]*`)/)
    .map((part) => (part.startsWith('`') ? part.slice(1, -1) : part.replace(/\*\*([^*]+)\*\*/g, '$1').replace(/\*([^*]+)\*/g, '$1')))
    .join('');
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** `text` as `# ` lines of at most WIDTH characters, broken between words. */
function comment(text: string): string[] {
  const lines: string[] = [];
  let line = '#';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line.length > 1 && line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = '#';
    }
    line += ` ${word}`;
  }
  lines.push(line);
  return lines;
}
