/**
 * `${env:NAME}` in a proxy's configuration values: replaced by the variable NAME of apply's environment, so a secret
 * stays out of the file (and out of Git). `$${` is a literal `${`. Any other `${` is refused rather than kept, so a
 * mistyped placeholder never reaches a transform as text.
 */
const TOKEN = /\$\$\{|\$\{([^}]*)\}?/g;
const PLACEHOLDER = /^env:([A-Za-z_][A-Za-z0-9_]*)$/;

export function expandPlaceholders(value: string, env: NodeJS.ProcessEnv, problem: (message: string) => void): string {
  return value.replace(TOKEN, (token: string, inner: string | undefined) => {
    if (token === '$${') return '${';
    const name = token.endsWith('}') ? PLACEHOLDER.exec(inner ?? '')?.[1] : undefined;
    if (!name) {
      problem(`'${token.slice(0, 40)}' is not a placeholder: write \${env:NAME}, or $\${ for a literal \${`);
      return token;
    }
    const found = env[name];
    if (found === undefined) {
      problem(`\${env:${name}}: the environment variable ${name} is not set`);
      return token;
    }
    return found;
  });
}

/** A value written as it is into the file, read back unchanged by expandPlaceholders. */
export function escapePlaceholders(value: string): string {
  // A function: in a replacement string, `$$` would be one `$`.
  return value.replace(/\$\{/g, () => '$${');
}

/** The variable that export names for a configuration value: GATEHOUSE_<PROXY>_<KEY>, upper case, `_` elsewhere. */
export function placeholderName(proxy: string, key: string, taken: Set<string>): string {
  const part = (s: string) =>
    s
      .toUpperCase()
      .replace(/[^A-Z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '') || 'X';
  const base = `GATEHOUSE_${part(proxy)}_${part(key)}`;
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
  taken.add(name);
  return name;
}
