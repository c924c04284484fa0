import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { load, YAMLException } from 'js-yaml';
import { DestinationPolicy, FieldErrorCollector, FieldErrors, validateGrant, validateName, validateProxyInput } from '@gatehouse/domain';
import { toRule } from '../../applications/applications.dto';
import { flattenErrors } from '../../http/validation';
import { ConfigFileDto, FileApplicationDto, FileProxyDto, TransformFileDto } from './config-file.dto';
import { ApplicationSpec, canonicalApplication, canonicalProxy, ProxySpec, TenantSpec } from './model';
import { expandPlaceholders } from './placeholders';

/** A file that cannot be applied: every problem found, each as `path: message`. */
export class ConfigFileError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`${file}: ${problems.length === 1 ? problems[0] : `${problems.length} problems`}`);
  }
}

/**
 * The operator's destination policy is the service's: the file is checked with the widest one here (http and any
 * address), and the service refuses what its policy refuses when apply sends it.
 */
const ANY_DESTINATION: DestinationPolicy = { allowHttp: true, allowsLiteralHost: () => true };

/**
 * Reads and checks gatehouse.yaml: YAML syntax, the schema (unknown keys refused), the domain's rules, unique names,
 * transform code files (relative to the file) and `${env:NAME}` placeholders. Throws ConfigFileError with every
 * problem at once; the result is canonical (model.ts).
 */
export async function loadConfigFile(path: string, env: NodeJS.ProcessEnv): Promise<TenantSpec> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigFileError(path, [`cannot be read: ${(error as Error).message}`]);
  }
  let raw: unknown;
  try {
    raw = load(text, { filename: path });
  } catch (error) {
    if (!(error instanceof YAMLException)) throw error;
    const at = error.mark ? `line ${error.mark.line + 1}, column ${error.mark.column + 1}: ` : '';
    throw new ConfigFileError(path, [`${at}${error.reason} (not valid YAML)`]);
  }
  const errors: FieldErrors = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  if (!isMapping(raw)) {
    throw new ConfigFileError(path, ['must be a YAML mapping with version, applications and proxies (docs/operations/configuration-as-code.md)']);
  }
  for (const section of ['applications', 'proxies']) {
    if (section in raw && raw[section] === null) add(section, 'must be a list ([] for none; leave the key out not to manage them)');
  }
  const configurations = takeConfigurations(raw, add);
  const dto = plainToInstance(ConfigFileDto, raw);
  const shape = flattenErrors(await validate(dto, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true }));
  for (const [field, messages] of Object.entries(shape)) {
    for (const message of messages) {
      // Said once below for every item that is not a mapping (class-validator passes over one that is a list).
      if (!message.startsWith('each value in nested property')) add(field, withoutFieldName(field, message));
    }
  }
  // The domain's rules run on every entity too, so all problems show at once, but say nothing more about a field
  // whose shape is already wrong (and a value of the wrong type may trip them: the shape error says it).
  const shaped = new Set(Object.keys(errors));
  const addRule = (field: string, message: string) => {
    if (![...shaped].some((bad) => field === bad || field.startsWith(`${bad}.`) || field.startsWith(`${bad}[`))) add(field, message);
  };
  const spec: TenantSpec = {};
  for (const section of ['applications', 'proxies'] as const) {
    const items: unknown = dto[section];
    if (Array.isArray(items)) items.forEach((item: unknown, i) => !isMapping(item) && add(`${section}[${i}]`, 'must be a mapping'));
  }
  if (Array.isArray(dto.applications)) {
    spec.applications = [];
    for (const [i, app] of dto.applications.entries()) {
      if (isMapping(app)) await tolerant(() => spec.applications!.push(checkApplication(app, `applications[${i}]`, addRule)));
    }
    uniqueNames('applications', dto.applications, add);
  }
  if (Array.isArray(dto.proxies)) {
    spec.proxies = [];
    const dir = dirname(resolve(path));
    for (const [i, proxy] of dto.proxies.entries()) {
      const at = `proxies[${i}]`;
      if (!isMapping(proxy)) continue;
      await tolerant(async () => {
        const checked = await checkProxy(proxy, configurations.get(i) ?? {}, { at, dir, env, add: addRule });
        spec.proxies!.push(checked);
        const target = spec.applications?.find((app) => app.name === checked.application);
        if (target && target.type === 'management')
          addRule(`${at}.application`, `'${target.name}' is a management application: a proxy acts as a public or private one`);
      });
    }
    uniqueNames('proxies', dto.proxies, add);
  }
  const problems = Object.entries(errors)
    .sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))
    .flatMap(([field, messages]) => messages.map((message) => `${field}: ${message}`));
  if (problems.length > 0) throw new ConfigFileError(path, problems);
  return spec;
}

/** class-validator's words without repeating the field's own name (`limit: limit must not be less than 1`). */
function withoutFieldName(field: string, message: string): string {
  const name = /([^.[\]]+)$/.exec(field)?.[1];
  return name && message.startsWith(`${name} `) ? message.slice(name.length + 1) : message;
}

/** A check over values of the wrong shape may throw: the shape's own error already says what is wrong. */
async function tolerant(check: () => unknown): Promise<void> {
  try {
    await check();
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
  }
}

/**
 * Each proxy's `configuration` is taken out before class-transformer sees it (it drops or trips on members named
 * like Object.prototype's, which are data here) and checked member by member: strings only.
 */
function takeConfigurations(raw: Record<string, unknown>, add: (field: string, message: string) => void): Map<number, Record<string, string>> {
  const out = new Map<number, Record<string, string>>();
  if (!Array.isArray(raw.proxies)) return out;
  raw.proxies.forEach((proxy: unknown, i) => {
    if (!isMapping(proxy) || !isMapping(proxy.configuration)) return;
    const map: Record<string, string> = Object.create(null);
    for (const [key, value] of Object.entries(proxy.configuration)) {
      if (typeof value === 'string') map[key] = value;
      else
        add(
          `proxies[${i}].configuration.${key}`,
          typeof value === 'number' || typeof value === 'boolean' ? `must be a string (quote it: "${value}")` : 'must be a string',
        );
    }
    out.set(i, map);
    proxy.configuration = {};
  });
  return out;
}

function checkApplication(app: FileApplicationDto, at: string, add: (field: string, message: string) => void): ApplicationSpec {
  const spec = canonicalApplication({
    name: app.name,
    type: app.type,
    permissions: app.permissions,
    rules: app.rules,
    can_create_expiring_applications: app.can_create_expiring_applications,
    rate_limit: app.rate_limit,
  });
  domainRules(at, add, (errors) => {
    validateName(app.name, errors);
    validateGrant(
      app.type,
      { permissions: app.permissions ?? [], rules: (app.rules ?? []).map(toRule), canCreateExpiringApplications: app.can_create_expiring_applications ?? null },
      errors,
    );
  });
  return spec;
}

async function checkProxy(
  proxy: FileProxyDto,
  configuration: Record<string, string>,
  { at, dir, env, add }: { at: string; dir: string; env: NodeJS.ProcessEnv; add: (field: string, message: string) => void },
): Promise<ProxySpec> {
  const expanded: Record<string, string> = Object.create(null);
  for (const [key, value] of Object.entries(configuration)) {
    expanded[key] = expandPlaceholders(value, env, (message) => add(`${at}.configuration.${key}`, message));
  }
  const spec = canonicalProxy({
    name: proxy.name,
    destination_url: proxy.destination_url,
    require_auth: proxy.require_auth,
    application: proxy.application,
    configuration: expanded,
    request_transform: await transformCode(proxy.request_transform, `${at}.request_transform`, dir, add),
    response_transform: await transformCode(proxy.response_transform, `${at}.response_transform`, dir, add),
    rate_limit: proxy.rate_limit,
  });
  domainRules(at, add, (errors) =>
    validateProxyInput(
      {
        name: spec.name,
        destinationUrl: spec.destination_url,
        requestTransform: spec.request_transform === null ? null : { code: spec.request_transform },
        responseTransform: spec.response_transform === null ? null : { code: spec.response_transform },
        configuration: spec.configuration,
        requireAuth: spec.require_auth,
        rateLimit: spec.rate_limit && { limit: spec.rate_limit.limit, windowSeconds: spec.rate_limit.window_seconds },
      },
      ANY_DESTINATION,
      errors,
    ),
  );
  return spec;
}

async function transformCode(
  transform: TransformFileDto | undefined,
  at: string,
  dir: string,
  add: (field: string, message: string) => void,
): Promise<string | null> {
  if (!transform) return null;
  if ((transform.code === undefined) === (transform.code_file === undefined)) {
    add(at, 'must have exactly one of code and code_file');
    return null;
  }
  if (transform.code !== undefined) return transform.code;
  try {
    return await readFile(resolve(dir, transform.code_file!), 'utf8');
  } catch (error) {
    add(`${at}.code_file`, `cannot be read: ${(error as Error).message}`);
    return null;
  }
}

/** The domain's own checks of one entity, their fields put under its path in the file. */
function domainRules(at: string, add: (field: string, message: string) => void, check: (errors: FieldErrorCollector) => void): void {
  const errors = new FieldErrorCollector();
  check(errors);
  try {
    errors.throwIfAny();
  } catch (error) {
    for (const [field, messages] of Object.entries((error as { fieldErrors: FieldErrors }).fieldErrors)) {
      for (const message of messages) add(`${at}.${field}`, message);
    }
  }
}

/** apply matches entities by name: two of a kind with one name cannot both be managed. */
function uniqueNames(section: string, items: Array<{ name?: unknown }>, add: (field: string, message: string) => void): void {
  const first = new Map<string, number>();
  items.forEach((item, i) => {
    if (typeof item?.name !== 'string') return;
    const seen = first.get(item.name);
    if (seen === undefined) first.set(item.name, i);
    else add(`${section}[${i}].name`, `'${item.name}' is also the name of ${section}[${seen}]: names must be unique, apply matches by name`);
  });
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
