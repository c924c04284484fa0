import { INestApplication } from '@nestjs/common';
import { gatehouseVersion } from '@gatehouse/config';
import { MAX_LOG_STREAMS_PER_TENANT } from '@gatehouse/domain';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { OperationObject, PathItemObject, ResponseObject, SchemaObject, SecurityRequirementObject } from '@nestjs/swagger';

export const API_KEY_SCHEME = 'api-key';
const PROXY_KEY_SCHEME = 'proxy-key';
const PROXY_KEY_QUERY_SCHEME = 'proxy-key-query';
const PROBLEM = 'application/problem+json';
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * The document clients generate from (openapi-typescript, openapi-generator...): the controllers' decorators give the
 * operations and their bodies; what every operation shares is added here once, so no operation can lack it: the
 * ProblemDetails responses of CONTRACT.md section 2 (by what the operation takes: a key, a body, a path id), an
 * explicit empty `security` on public operations, and the `/proxy` data plane, which is not a Nest route.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Gatehouse')
    .setDescription(
      'Applications and API keys, proxies with sandboxed transforms, and audit logs. Every error is an RFC 7807 ' +
        '`application/problem+json` body (`ProblemDetails`); validation errors name each field in `errors`. Lists take ' +
        '`page` and `size`, or the opaque `start` cursor from `pagination.next`.',
    )
    .setVersion(gatehouseVersion())
    .setLicense('Apache-2.0', 'https://www.apache.org/licenses/LICENSE-2.0')
    .addServer('/', 'The service that serves this document (`npm start`: http://localhost:3000)')
    .addTag('applications', 'The identities behind API keys: permissions, access rules, key regeneration')
    .addTag('proxies', 'Pre-configured routes to a destination, with optional transform code')
    .addTag('proxy', 'The data plane: invoking a proxy by its key')
    .addTag('logs', 'The audit trail of every change')
    .addTag('permissions', 'The permission catalogue')
    .addTag('health', 'Liveness and readiness probes')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'SVC-API-KEY', description: 'An application key (`key_...`)' }, API_KEY_SCHEME)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'SVC-PROXY-KEY', description: 'The key of the proxy to invoke' }, PROXY_KEY_SCHEME)
    .addApiKey({ type: 'apiKey', in: 'query', name: 'svc-proxy-key', description: 'The proxy key, as a query parameter' }, PROXY_KEY_QUERY_SCHEME)
    .build();
  const document = SwaggerModule.createDocument(app, config);
  // OpenAPI 3.1 (JSON Schema 2020-12): 3.0's `nullable` cannot make a `$ref` nullable, so a PATCH's
  // `request_transform: null` would be invalid against its own document.
  document.openapi = '3.1.0';
  toJsonSchemaNullability(document);
  document.components = { ...document.components, schemas: { ...document.components?.schemas, ...SHARED_SCHEMAS } };
  document.paths = { ...document.paths, ...proxyDataPlane() };
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = (item as PathItemObject)[method];
      if (operation) completeOperation(path, operation);
    }
  }
  return document;
}

// The console's framing rules (no page may frame these) and no MIME sniffing, on the browsable docs and the documents.
const DOCS_HEADERS: Record<string, string> = {
  'Content-Security-Policy': "frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
};

/** `/openapi.json` and the browsable `/docs`, both without authentication, neither framable. */
export function mountOpenApi(app: INestApplication): void {
  // Ahead of the routes SwaggerModule adds just below.
  app.use(['/docs', '/openapi.json', '/openapi.yaml'], (_req: unknown, res: { setHeader(name: string, value: string): void }, next: () => void) => {
    for (const [name, value] of Object.entries(DOCS_HEADERS)) res.setHeader(name, value);
    next();
  });
  SwaggerModule.setup('docs', app, buildOpenApiDocument(app), {
    jsonDocumentUrl: 'openapi.json',
    yamlDocumentUrl: 'openapi.yaml',
  });
}

/** Every `nullable: true` (what @nestjs/swagger emits) in its OpenAPI 3.1 form: `null` among the types, or `anyOf`. */
function toJsonSchemaNullability(node: unknown): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) return node.forEach(toJsonSchemaNullability);
  const record = node as Record<string, unknown>;
  for (const value of Object.values(record)) toJsonSchemaNullability(value);
  if (typeof record.nullable !== 'boolean') return;
  const nullable = record.nullable;
  delete record.nullable;
  if (!nullable) return;
  if (typeof record.type === 'string' && !record.allOf && !record.$ref) {
    record.type = [record.type, 'null'];
    return;
  }
  // A reference (or a composition): the schema itself, or null. Annotations stay outside.
  const { description, default: fallback, ...schema } = record;
  delete schema.type;
  for (const key of Object.keys(record)) delete record[key];
  Object.assign(record, {
    ...(description === undefined ? {} : { description }),
    ...(fallback === undefined ? {} : { default: fallback }),
    anyOf: [
      schema.allOf && Object.keys(schema).length === 1 && (schema.allOf as unknown[]).length === 1 ? (schema.allOf as unknown[])[0] : schema,
      { type: 'null' },
    ],
  });
}

const SHARED_SCHEMAS: Record<string, SchemaObject> = {
  ProblemDetails: {
    type: 'object',
    description: 'RFC 7807 problem details (CONTRACT.md section 2)',
    required: ['type', 'title', 'status'],
    properties: {
      type: { type: 'string', example: 'https://gatehouse.dev/problems/400' },
      title: { type: 'string', example: 'One or more validation errors occurred.' },
      status: { type: 'integer', example: 400 },
      detail: { type: 'string' },
      instance: { type: 'string', description: 'The request id (also the `x-request-id` header): quote it when reporting a fault' },
      errors: {
        type: 'object',
        description: 'Validation errors only: each offending field, by its snake_case path (`rules[0].priority`), with its messages',
        additionalProperties: { type: 'array', items: { type: 'string' } },
      },
    },
  },
  ProxyError: {
    type: 'object',
    description:
      "A transform's failure (docs/transforms.md): a reactor error it threw (AuthenticationError 401, AuthorizationError 403, " +
      'BadRequestError 400, InvalidPaymentMethodError 402, InvalidReactorConfigurationError 400, UnprocessableEntityError 422, ' +
      'RateLimitError 429, ReactorRuntimeError 500, ServiceUnavailableError 503: title "One or more validation errors occurred.", ' +
      "the class's detail, the constructor's argument in `errors`), or any other throw, a timeout or running out of memory " +
      '(500, title ReactorRuntimeError, the message in `detail`)',
    required: ['proxy_error'],
    properties: {
      proxy_error: {
        type: 'object',
        required: ['title', 'status', 'detail', 'errors'],
        properties: {
          title: { type: 'string', example: 'One or more validation errors occurred.' },
          status: { type: 'integer', minimum: 400, maximum: 599, example: 401 },
          detail: { type: 'string', example: 'Authentication Failed' },
          errors: {
            type: 'object',
            additionalProperties: { type: 'array', items: { type: 'string' } },
            example: { error: ['MY-CUSTOM-API-KEY header is required'] },
          },
        },
      },
    },
  },
};

const RETRY_AFTER = { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } };
const DESTINATION_STATUS = {
  'svc-proxy-destination-status': { description: 'The status the destination answered with (when it answered)', schema: { type: 'integer' } },
};

function problemResponse(description: string, headers?: ResponseObject['headers']): ResponseObject {
  return { description, ...(headers ? { headers } : {}), content: { [PROBLEM]: { schema: { $ref: '#/components/schemas/ProblemDetails' } } } };
}

const ERRORS = {
  400: problemResponse(
    'Bad input: malformed or non-UTF-8 JSON, a wrong type, an unknown field or query parameter, a rule of the contract; `errors` names each field',
  ),
  401: problemResponse('`SVC-API-KEY` missing, unknown, regenerated away, or of an expired application'),
  403: problemResponse(
    'The key is valid but may not do this: it lacks the permission the operation needs, or (applications, and proxies bound to one) the operation would grant or act on more than the key holds: permissions, rules, `can_create_expiring_applications`, or a looser rate limit',
  ),
  404: problemResponse("No such resource in the caller's tenant"),
  413: problemResponse('The body exceeds the size limit (1 MiB by default)'),
  415: problemResponse('An unsupported Content-Type or charset (PATCH takes application/merge-patch+json)'),
  429: problemResponse("Too many failed authentications from this client, or the application's rate limit; retry after `Retry-After`", RETRY_AFTER),
  500: problemResponse('An unexpected fault, logged with the request id that `instance` carries'),
  503: problemResponse('A dependency (the database) is unavailable; retry after `Retry-After`', RETRY_AFTER),
} satisfies Record<number, ResponseObject>;

/** The operations that can answer 409 Conflict, and when. */
const CONFLICTS: Record<string, string> = {
  createToken: 'The tenant already has a token with the `id` given (caller-chosen or from an alias expression)',
  tokenize: 'The tenant already has a token with one of the `id`s given; nothing is created',
  createLogStream: `The tenant already has the most log streams it may have (${MAX_LOG_STREAMS_PER_TENANT})`,
};

/** The error responses an operation can give, by what it takes; a summary and `security: []` where missing. */
function completeOperation(path: string, operation: OperationObject): void {
  const secured = (operation.security ?? []).length > 0;
  if (!operation.security) operation.security = [];
  const statuses: (keyof typeof ERRORS)[] = [400, 500, 503];
  if (secured) statuses.push(401, 403, 429);
  if (path.includes('{')) statuses.push(404);
  if (operation.requestBody) statuses.push(413, 415);
  for (const status of statuses.sort()) operation.responses[status] ??= ERRORS[status];
  const conflict = operation.operationId === undefined ? undefined : CONFLICTS[operation.operationId];
  if (conflict) operation.responses[409] ??= problemResponse(conflict);
}

/** `/proxy` and `/proxy/{path}`: any of five methods, the proxy named by its key, the destination's answer passed on. */
function proxyDataPlane(): Record<string, PathItemObject> {
  const security: SecurityRequirementObject[] = [
    { [PROXY_KEY_SCHEME]: [] },
    { [PROXY_KEY_QUERY_SCHEME]: [] },
    { [PROXY_KEY_SCHEME]: [], [API_KEY_SCHEME]: [] },
    { [PROXY_KEY_QUERY_SCHEME]: [], [API_KEY_SCHEME]: [] },
  ];
  // Every status may also be the destination's own answer (or a CustomHttpResponseError's), passed on as it came:
  // then `svc-proxy-destination-status` is set (for a destination) and the body is whatever it sent.
  const passedOn = { description: "The destination's (or a CustomHttpResponseError's) own body, as it came" };
  const answers = (description: string, own: { problem?: boolean; proxyError?: boolean }, headers?: ResponseObject['headers']): ResponseObject => ({
    description: `${description}. Otherwise the destination's own answer with this status, or a transform's CustomHttpResponseError`,
    headers: { ...DESTINATION_STATUS, ...(headers ?? {}) },
    content: {
      [PROBLEM]: { schema: own.problem ? { anyOf: [{ $ref: '#/components/schemas/ProblemDetails' }, passedOn] } : passedOn },
      'application/json': { schema: own.proxyError ? { anyOf: [{ $ref: '#/components/schemas/ProxyError' }, passedOn] } : passedOn },
      '*/*': { schema: passedOn },
    },
  });
  const operation = (method: string, withPath: boolean): OperationObject => ({
    tags: ['proxy'],
    operationId: `invokeProxy${withPath ? 'Path' : ''}${method[0]!.toUpperCase()}${method.slice(1)}`,
    summary: `Invoke a proxy (${method.toUpperCase()}${withPath ? ', with more path' : ''})`,
    description:
      "Forwards the request to the proxy's `destination_url` (then the more path, then the query string without " +
      '`svc-proxy-key`), through its request and response transforms. The proxy is named by `SVC-PROXY-KEY` or ' +
      "`?svc-proxy-key=`; with `require_auth` (the default) `SVC-API-KEY` of an application of the proxy's tenant " +
      "holding `proxy:invoke` is needed too. Any other query parameter is the destination's.",
    security,
    parameters: withPath
      ? [
          {
            name: 'path',
            in: 'path',
            required: true,
            description: 'The more path appended to the destination; segments are separated by `/` (no `.`, `..`, backslash or encoded slash)',
            schema: { type: 'string' },
          },
        ]
      : [],
    ...(method === 'get' || method === 'delete'
      ? {}
      : { requestBody: { required: false, description: 'Any body: forwarded, or given to the request transform', content: { '*/*': { schema: {} } } } }),
    responses: {
      default: {
        description: "The destination's response (or the response transform's)",
        headers: DESTINATION_STATUS,
        content: { '*/*': { schema: {} } },
      },
      400: answers(
        "A path that escapes the destination's or a body that ended early (ProblemDetails); a transform's BadRequestError or InvalidReactorConfigurationError (ProxyError)",
        { problem: true, proxyError: true },
      ),
      401: answers("No proxy key, or (with `require_auth`) no valid `SVC-API-KEY` (ProblemDetails); a transform's AuthenticationError (ProxyError)", {
        problem: true,
        proxyError: true,
      }),
      402: answers("A transform's InvalidPaymentMethodError (ProxyError)", { proxyError: true }),
      403: answers("The key lacks `proxy:invoke` or belongs to another tenant (ProblemDetails); a transform's AuthorizationError (ProxyError)", {
        problem: true,
        proxyError: true,
      }),
      404: answers('No proxy has this key (ProblemDetails)', { problem: true }),
      405: answers('A method proxies do not take (ProblemDetails, with `Allow`)', { problem: true }),
      413: answers('The body exceeds the size limit (ProblemDetails)', { problem: true }),
      422: answers("A transform's UnprocessableEntityError (ProxyError)", { proxyError: true }),
      429: answers(
        "Throttled or rate limited, `Retry-After` (ProblemDetails); a transform's RateLimitError (ProxyError)",
        { problem: true, proxyError: true },
        RETRY_AFTER,
      ),
      500: answers('A transform threw, timed out or ran out of memory (ProxyError, title ReactorRuntimeError); an unexpected fault (ProblemDetails)', {
        problem: true,
        proxyError: true,
      }),
      502: answers('The destination could not be reached, resolves to a refused address, or answered too large for a transform (ProblemDetails)', {
        problem: true,
      }),
      503: answers(
        "A dependency is unavailable or the sandbox pool is saturated, `Retry-After` (ProblemDetails); a transform's ServiceUnavailableError (ProxyError)",
        { problem: true, proxyError: true },
        RETRY_AFTER,
      ),
      504: answers('The destination did not answer in time (ProblemDetails)', { problem: true }),
    },
  });
  const item = (withPath: boolean): PathItemObject =>
    Object.fromEntries(['get', 'post', 'put', 'patch', 'delete'].map((method) => [method, operation(method, withPath)]));
  return { '/proxy': item(false), '/proxy/{path}': item(true) };
}
