import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import ts from 'typescript';
import { REPO_ROOT } from './service-process';

/** One rendered Kubernetes object, as `kubectl kustomize` prints it. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [member: string]: unknown;
}

export const KUBERNETES_DIR = join(REPO_ROOT, 'deploy/kubernetes');

/**
 * `kubectl kustomize <dir>` (.ci/run installs Debian's kubernetes-client when no kubectl is there; its kustomize is
 * v2.0.3, which the manifests are written for too), parsed. KUBECTL names another kubectl to render with.
 */
export function kustomize(dir: string): K8sObject[] {
  const yaml = execFileSync(process.env.KUBECTL ?? 'kubectl', ['kustomize', join(KUBERNETES_DIR, dir)], {
    encoding: 'utf8',
    timeout: 60_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return (loadAll(yaml) as K8sObject[]).filter(Boolean);
}

/** The kubernetes-models module of a kind: `apps/v1` Deployment -> kubernetes-models/apps/v1/Deployment. */
function modelPath({ apiVersion, kind }: K8sObject): string {
  return `kubernetes-models/${apiVersion}/${kind}`;
}

/**
 * Validates with kubernetes-models' schemas (the Kubernetes OpenAPI definitions, compiled by ajv): types, required
 * members, formats. Returns one message per invalid object.
 */
export function schemaErrors(objects: K8sObject[]): string[] {
  const errors: string[] = [];
  for (const object of objects) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the model module is chosen by the object's kind
    const module = require(modelPath(object)) as Record<string, new (data: unknown) => { validate(): void }>;
    try {
      new module[object.kind]!(apiServerForm(object)).validate();
    } catch (error) {
      errors.push(`${object.kind}/${object.metadata.name}: ${(error as Error).message}`);
    }
  }
  return errors;
}

/**
 * kustomize wraps a long Secret value's base64 over lines, which the API server decodes as Go's base64 does, skipping
 * the line breaks; the schema's `byte` format does not skip them.
 */
function apiServerForm(object: K8sObject): K8sObject {
  if (object.kind !== 'Secret' || !object.data) return object;
  const data = Object.fromEntries(Object.entries(object.data as Record<string, string>).map(([key, value]) => [key, value.replace(/\s+/g, '')]));
  return { ...object, data };
}

/**
 * The schemas above accept members they do not define (Kubernetes' own OpenAPI never closes an object), so a
 * misspelt `readinesProbe` would pass them and be dropped by the API server. The same definitions as TypeScript
 * interfaces do not: each object is type-checked as an object literal of its kind, where an unknown member is an error.
 */
export function unknownMemberErrors(objects: K8sObject[]): string[] {
  const file = join(REPO_ROOT, '__rendered-manifests.ts');
  const imports = new Set<string>();
  const lines = objects.map((object, i) => {
    imports.add(`import type { I${object.kind} } from '${modelPath(object)}';`);
    return `export const o${i}: I${object.kind} = ${JSON.stringify(object)};`;
  });
  const source = [...imports, ...lines].join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    types: [],
    skipLibCheck: true,
    module: ts.ModuleKind.CommonJS,
    target: ts.ScriptTarget.ES2022,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) => (name === file ? ts.createSourceFile(name, source, language) : getSourceFile(name, language, ...rest));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : undefined;
    const object = line !== undefined ? objects[line - imports.size] : undefined;
    return `${object ? `${object.kind}/${object.metadata.name}: ` : ''}${message}`;
  });
}
