import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { dump } from 'js-yaml';
import { CONFIG_FILE_VERSION } from './config-file.dto';
import { ApplicationSpec, CurrentApplication, TenantState } from './model';
import { escapePlaceholders, placeholderName } from './placeholders';

export interface ExportOptions {
  /** Where the YAML goes (undefined: stdout): code files are named relative to it. */
  output?: string;
  /** Transform code into files here instead of inline. */
  codeDir?: string;
  /** Configuration values written as they are, instead of `${env:NAME}` placeholders. */
  inlineConfiguration: boolean;
  heading: string;
}

export interface ExportResult {
  yaml: string;
  /** The variables the placeholders name, with the proxy and configuration key each stands for. */
  variables: Array<{ name: string; proxy: string; key: string }>;
  codeFiles: string[];
}

/**
 * The tenant as gatehouse.yaml, such that applying it changes nothing: every field apply compares, defaults left out.
 * Never a key; not the key in use's own application, nor expiring ones. Configuration values become placeholders
 * unless asked for inline (they are often the destinations' credentials, and the file is meant for Git).
 */
export async function exportTenant(state: TenantState, options: ExportOptions): Promise<ExportResult> {
  // By name: the same tenant exports the same file, whatever order the API lists them in.
  const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const applications = (state.applications ?? []).filter((app) => app.id !== state.self?.id).sort(byName);
  const proxies = [...(state.proxies ?? [])].sort(byName);
  refuseDuplicates('applications', applications);
  refuseDuplicates('proxies', proxies);
  const variables: ExportResult['variables'] = [];
  const codeFiles: string[] = [];
  const taken = new Set<string>();
  const base = options.output ? dirname(resolve(options.output)) : process.cwd();
  const slugs = new Set<string>();

  const proxyEntries = [];
  for (const proxy of proxies) {
    const fileStem = uniqueSlug(proxy.name, slugs);
    const entry: Record<string, unknown> = { name: proxy.name, destination_url: proxy.destination_url, require_auth: proxy.require_auth };
    if (proxy.application !== null) entry.application = proxy.application;
    const keys = Object.keys(proxy.configuration);
    if (keys.length > 0) {
      entry.configuration = Object.fromEntries(
        keys.map((key) => {
          if (options.inlineConfiguration) return [key, escapePlaceholders(proxy.configuration[key]!)];
          const name = placeholderName(proxy.name, key, taken);
          variables.push({ name, proxy: proxy.name, key });
          return [key, `\${env:${name}}`];
        }),
      );
    }
    for (const [field, suffix] of [
      ['request_transform', 'request'],
      ['response_transform', 'response'],
    ] as const) {
      const code = proxy[field];
      if (code === null) continue;
      if (!options.codeDir) {
        entry[field] = { code };
        continue;
      }
      const file = join(resolve(options.codeDir), `${fileStem}.${suffix}.js`);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, code, 'utf8');
      codeFiles.push(file);
      const path = relative(base, file).split(sep).join('/');
      entry[field] = { code_file: path.startsWith('.') || path.startsWith('/') ? path : `./${path}` };
    }
    if (proxy.rate_limit) entry.rate_limit = proxy.rate_limit;
    proxyEntries.push(entry);
  }

  const document = { version: CONFIG_FILE_VERSION, applications: applications.map(applicationEntry), proxies: proxyEntries };
  const yaml = dump(document, { lineWidth: -1, noRefs: true });
  const comments = options.heading.split('\n').map((line) => `# ${line}`.trimEnd());
  return { yaml: `${comments.join('\n')}\n${yaml}`, variables, codeFiles };
}

function applicationEntry(app: CurrentApplication): Record<string, unknown> {
  const entry: Partial<ApplicationSpec> = { name: app.name, type: app.type };
  if (app.permissions.length > 0) entry.permissions = app.permissions;
  if (app.rules.length > 0) entry.rules = app.rules;
  if (app.can_create_expiring_applications) entry.can_create_expiring_applications = true;
  if (app.rate_limit) entry.rate_limit = app.rate_limit;
  return entry;
}

function refuseDuplicates(section: string, entities: Array<{ name: string }>): void {
  const counts = new Map<string, number>();
  for (const { name } of entities) counts.set(name, (counts.get(name) ?? 0) + 1);
  const repeated = [...counts].filter(([, n]) => n > 1).map(([name, n]) => `'${name}' (${n})`);
  if (repeated.length > 0) {
    throw new Error(`the tenant's ${section} repeat names: ${repeated.join(', ')}; apply matches by name, so rename them before exporting`);
  }
}

/** A file name stem from a proxy's name, distinct from the others' (`payments`, `payments-2`). */
function uniqueSlug(name: string, taken: Set<string>): string {
  const base =
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'proxy';
  let candidate = base;
  for (let n = 2; taken.has(candidate); n++) candidate = `${base}-${n}`;
  taken.add(candidate);
  return candidate;
}
