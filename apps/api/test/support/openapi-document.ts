import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Response } from 'supertest';
import { REPO_ROOT } from '@gatehouse/test-support/service-process';

export type Json = Record<string, any>;

/** The committed OpenAPI document (`npm run openapi`). */
export function openApiDocument(): Json {
  return JSON.parse(readFileSync(join(REPO_ROOT, 'apps/api/openapi.json'), 'utf8'));
}

/**
 * Checks responses against the document: the status is documented for the operation, the content type is one it
 * lists, and the body validates against that response's schema (ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses).
 * Shared by openapi-conformance.test.ts (a hand-written tour) and fuzz-operations.test.ts (generated cases).
 */
export function openApiChecker(document: Json = openApiDocument()) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema(document, 'openapi');
  /** `METHOD path status` of every response checked so far. */
  const checked = new Set<string>();

  /** The schema at a JSON pointer of the document, compiled once. */
  function validatorAt(pointer: string[]) {
    const ref = `openapi#/${pointer.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`;
    return ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
  }

  /** Throws unless the response conforms to what the document says `method path` answers with that status. */
  function conforms(method: string, path: string, res: Response): void {
    const operation = document.paths[path]?.[method];
    if (!operation) throw new Error(`${method.toUpperCase()} ${path} is not in the document`);
    const status = String(res.status);
    const key = operation.responses[status] ? status : 'default';
    const response = operation.responses[key];
    if (!response) throw new Error(`${method.toUpperCase()} ${path} answered ${status}, which the document does not list`);
    checked.add(`${method.toUpperCase()} ${path} ${status}`);
    if (!response.content) {
      if ((res.text ?? '') !== '') throw new Error(`${method.toUpperCase()} ${path} ${status} has a body; the document lists none`);
      return;
    }
    const mediaType = String(res.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    const media = response.content[mediaType] ? mediaType : response.content['*/*'] ? '*/*' : undefined;
    if (!media)
      throw new Error(`${method.toUpperCase()} ${path} ${status} answered ${mediaType}; the document lists ${Object.keys(response.content).join(', ')}`);
    if (media === '*/*') return;
    const validate = validatorAt(['paths', path, method, 'responses', key, 'content', media, 'schema']);
    // Text formats (CSV, NDJSON) are validated as the string they are; JSON ones as the value they parse to.
    const body = !/[/+]json$/.test(media) ? (res.text ?? '') : res.body !== undefined && Object.keys(res.body).length > 0 ? res.body : JSON.parse(res.text);
    if (!validate(body))
      throw new Error(`${method.toUpperCase()} ${path} ${status}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 1000)}`);
  }

  return { document, ajv, validatorAt, conforms, checked };
}
