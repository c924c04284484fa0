import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { AppConfig } from '@gatehouse/config';
import { problem, sendProblem } from './problem-details';

/**
 * The console holds API keys in a browser, so its origin serves nothing a tenant controls: it has a listener of its
 * own (CONSOLE_PORT) serving the console's files and the JSON management API it calls, never `/proxy` nor `/docs`,
 * and every response there but the console's own pages is a sandboxed document. The API's port sends `/console` to
 * the console's origin. docs/security.md ("Origins").
 */

/** Every response of the console's listener carries this unless it is one of the console's own pages (console.ts). */
export const CONSOLE_ORIGIN_DEFAULT_CSP = "sandbox; default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const consoleRequests = new WeakSet<IncomingMessage>();

/** Whether `req` arrived on the console's listener. */
export function onConsoleOrigin(req: IncomingMessage): boolean {
  return consoleRequests.has(req);
}

/**
 * The console listener's request handler: the API's own application, each request marked as the console's (the
 * marks are what the routes below check, whatever spelling of a path reached them) and sandboxed by default.
 */
export function consoleListener(app: RequestListener): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    consoleRequests.add(req);
    res.setHeader('Content-Security-Policy', CONSOLE_ORIGIN_DEFAULT_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    if (req.url === '/' && (req.method === 'GET' || req.method === 'HEAD')) {
      res.writeHead(302, { location: '/console/', 'cache-control': 'no-store' }).end();
      return;
    }
    app(req, res);
  };
}

/** Middleware refusing what the console's origin never serves (mounted in front of `/proxy` and `/docs`). */
export function notOnConsoleOrigin(what: string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!onConsoleOrigin(req)) return next();
    sendProblem(res, problem(404, `${what} is served on the API's origin, never on the console's`));
  };
}

/** A host name as a URL may carry it (a name, IPv4, or bracketed IPv6); anything else is not echoed anywhere. */
const HOST_NAME = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])$/;

/**
 * Where browsers reach the console and the API: the configured public origins, else the host name the browser used
 * with the other listener's port (`npm start`: http://localhost:3001 and http://localhost:3000).
 */
export class Origins {
  /** The ports actually bound (a configured 0 becomes the port the system chose): set by `main` once listening. */
  apiPort: number;
  consolePort: number | undefined;

  constructor(private readonly config: Pick<AppConfig, 'port' | 'consolePort' | 'consolePublicUrl' | 'apiPublicUrl'>) {
    this.apiPort = config.port;
    this.consolePort = config.consolePort;
  }

  /** Whether a console is served (here or, with CONSOLE_PUBLIC_URL, by whatever serves that origin). */
  get consoleServed(): boolean {
    return this.consolePort !== undefined || this.config.consolePublicUrl !== undefined;
  }

  consoleOrigin(req: Request): string | undefined {
    return this.config.consolePublicUrl ?? (this.consolePort === undefined ? undefined : derived(req, this.consolePort));
  }

  apiOrigin(req: Request): string | undefined {
    return this.config.apiPublicUrl ?? derived(req, this.apiPort);
  }

  /** The API port's `/console...`: to the same path on the console's origin (404 when no console is served). */
  readonly redirectToConsole = (req: Request, res: Response): void => {
    const origin = this.consoleOrigin(req);
    if (!origin) return sendProblem(res, problem(404, 'The console is not served (CONSOLE_PORT is off)'));
    res.setHeader('cache-control', 'no-store');
    res.redirect(302, `${origin}${req.originalUrl}`);
  };

  /** The console's origin when `req` comes from it (its "Try the proxy" calls `/proxy` across origins), else undefined. */
  corsOriginFor(req: Request): string | undefined {
    const origin = req.headers.origin;
    return typeof origin === 'string' && origin === this.consoleOrigin(req) ? origin : undefined;
  }
}

/** Answers a CORS preflight from the console's origin (`corsOrigin`) to `/proxy`; false when `req` is none. */
export function answeredConsolePreflight(req: Request, res: Response, corsOrigin: string): boolean {
  if (req.method !== 'OPTIONS' || typeof req.headers['access-control-request-method'] !== 'string') return false;
  res.setHeader('access-control-allow-origin', corsOrigin);
  res.setHeader('access-control-allow-methods', 'GET, POST, PUT, PATCH, DELETE');
  res.setHeader('access-control-allow-headers', 'svc-proxy-key, svc-api-key, content-type');
  res.setHeader('access-control-max-age', '600');
  res.status(204).end();
  return true;
}

function derived(req: Request, port: number): string | undefined {
  const host = req.hostname;
  if (!host || !HOST_NAME.test(host)) return undefined;
  return new URL(`${req.protocol}://${host}:${port}`).origin;
}
