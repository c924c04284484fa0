import type { SvcBridge, SvcRequest } from './transform-types';

const SVC_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The API-process side of one invocation's svc requests. What arrives from a sandbox process is
 * checked again here (the process runs tenant code: nothing it says is trusted), counted against the
 * limit, sent to the bridge, and the answer (or a failure the tenant may see) handed back as the JSON
 * the runtime expects. Once ended, answers are dropped.
 */
export class SvcBridgeRelay {
  private started = 0;
  private active = true;

  constructor(
    private readonly svc: SvcBridge | undefined,
    private readonly maxRequests: number,
    private readonly answer: (svcId: number, payload: string) => void,
  ) {}

  request(svcId: number, requestJson: string): void {
    if (!this.active) return;
    const refused = (error: string) => this.answer(svcId, JSON.stringify({ error }));
    if (!this.svc) return refused('svc is not available: the proxy names no application');
    if (this.started >= this.maxRequests) return refused(`a transform may make at most ${this.maxRequests} svc requests`);
    const request = parseSvcRequest(requestJson);
    if (typeof request === 'string') return refused(request);
    this.started++;
    let pending: Promise<{ status: unknown; body: unknown }>;
    try {
      pending = Promise.resolve(this.svc.request(request));
    } catch {
      pending = Promise.reject(new Error('svc bridge threw'));
    }
    pending.then(
      (response) => {
        if (!this.active) return;
        let payload: string;
        try {
          payload =
            typeof response?.status === 'number'
              ? JSON.stringify({ status: response.status, body: response.body })
              : JSON.stringify({ error: 'the service answered without a status' });
        } catch {
          payload = JSON.stringify({ error: 'the service answer is not JSON' });
        }
        this.answer(svcId, payload);
      },
      // The bridge's own error (internal addresses, a host stack) reaches the tenant only when the
      // bridge marked it as meant for it, and then only its message.
      (error: unknown) => {
        if (this.active) this.answer(svcId, JSON.stringify(exposedFailure(error) ?? { error: 'the service request could not be completed' }));
      },
    );
  }

  end(): void {
    this.active = false;
  }
}

/** An error thrown with `expose: true` (the http-errors convention) is the bridge refusing on purpose. */
function exposedFailure(error: unknown): { error: string; status: number } | null {
  if (error === null || typeof error !== 'object') return null;
  const { expose, message, status } = error as { expose?: unknown; message?: unknown; status?: unknown };
  if (expose !== true || typeof message !== 'string') return null;
  const valid = typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599;
  return { error: message.slice(0, 1000), status: valid ? status : 400 };
}

export function parseSvcRequest(json: string): SvcRequest | string {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return 'invalid svc request';
  }
  if (raw === null || typeof raw !== 'object') return 'invalid svc request';
  const { method, path, body, query } = raw as Record<string, unknown>;
  if (typeof method !== 'string' || !SVC_METHODS.has(method)) return `unsupported method ${String(method)}`;
  if (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('//') || /[\u0000-\u001f\\]/.test(path)) {
    return 'svc path must be an absolute path such as /applications';
  }
  const request: SvcRequest = { method, path };
  if (body !== undefined) request.body = body;
  if (query !== undefined && query !== null && typeof query === 'object') {
    const clean: Record<string, string | string[]> = {};
    for (const [key, value] of Object.entries(query)) {
      if (key === '__proto__') continue;
      if (typeof value === 'string') clean[key] = value;
      else if (Array.isArray(value)) clean[key] = value.filter((v): v is string => typeof v === 'string');
    }
    if (Object.keys(clean).length > 0) request.query = clean;
  }
  return request;
}
