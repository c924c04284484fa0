import { readFileSync } from 'node:fs';
import { CHECKS, Variable, VARIABLES } from './schema';
import { ConfigError } from './variable-kinds';

export { ConfigError } from './variable-kinds';

type Entry = (typeof VARIABLES)[number];
type Members = { [E in Entry as E extends Variable<infer K, unknown> ? K : never]: E extends Variable<string, infer T> ? T : never };
type OptionalMember<M> = { [K in keyof M]-?: undefined extends M[K] ? K : never }[keyof M];

/**
 * The service's configuration: a member for each variable of the schema (libs/config/src/schema.ts) that has a key,
 * of its kind's type; a variable with no default and nothing set is an absent member.
 */
export type AppConfig = { [K in Exclude<keyof Members, OptionalMember<Members>>]: Members[K] } & {
  [K in OptionalMember<Members>]?: Exclude<Members[K], undefined>;
};

type Env = Record<string, string | undefined>;

/**
 * Reads the environment through the schema: every variable is parsed (or takes its default), then the rules over
 * several are checked, and every problem found is thrown together in one ConfigError (one line each).
 */
export function loadConfig(env: Env = process.env): AppConfig {
  const problems: string[] = [];
  const refused = new Set<string>();
  const parsed: Record<string, unknown> = {};
  for (const variable of VARIABLES as readonly Variable[]) {
    const { kind, key, name } = variable;
    // Without a kind it is documented only: its reader reads it itself.
    if (!kind) continue;
    try {
      const raw = valueOf(env, variable);
      const got = (value: string) => (variable.secret ? '' : `, got '${value}'`);
      const { fallback } = kind;
      const value =
        raw !== undefined
          ? kind.parse(raw, { name, got, parsed })
          : typeof fallback === 'function'
            ? (fallback as (p: typeof parsed) => unknown)(parsed)
            : fallback;
      if (key !== undefined) parsed[key] = value;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
      refused.add(name);
    }
  }
  for (const check of CHECKS) {
    if (check.of.some((name) => refused.has(name))) continue;
    const problem = check.problem(parsed, (name) => nonEmpty(env, name) !== undefined);
    if (problem !== undefined) problems.push(problem);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return parsed as AppConfig;
}

/** Its text, trimmed; blank is unset. A `fromFile` variable given as `<NAME>_FILE` is read from that file. */
function valueOf(env: Env, { name, fromFile }: Variable): string | undefined {
  const value = nonEmpty(env, name);
  const file = fromFile ? nonEmpty(env, `${name}_FILE`) : undefined;
  if (file === undefined) return value;
  if (value !== undefined) throw new ConfigError(`${name} and ${name}_FILE are both set: set one`);
  let content: string;
  try {
    // One trailing newline cut, as the official database images do with their own *_FILE variables.
    content = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    // The file's name, never its content.
    throw new ConfigError(`${name}_FILE names '${file}', which cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (content.trim() === '') throw new ConfigError(`${name}_FILE names '${file}', which is empty`);
  return content.trim();
}

function nonEmpty(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}
