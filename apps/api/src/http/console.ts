import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express, { NextFunction, Request, Response } from 'express';
import { accessRecord } from './access-log';
import { onConsoleOrigin, Origins } from './console-origin';

/** What the console's index.html carries where the server puts each response's style nonce (a <meta> the code reads). */
export const STYLE_NONCE_PLACEHOLDER = '__GATEHOUSE_STYLE_NONCE__';
/** ...and the API's origin, where its "Try the proxy" sends requests (`/proxy` is never served on the console's). */
export const API_ORIGIN_PLACEHOLDER = '__GATEHOUSE_API_ORIGIN__';

/**
 * The console's policy: everything from this origin only (scripts, styles, the API calls), nothing inline, no
 * frames, no forms posted elsewhere. The console holds an API key, so an injected script must have nowhere to run.
 * With `styleNonce` (index.html's response) style elements carrying that nonce are allowed too: the transform editor
 * (CodeMirror) writes its styles into a <style> element it stamps with the nonce, and no other inline style runs.
 * Scripts never get a nonce: script-src stays 'self'. With `apiOrigin`, the console may also call the API's origin
 * (its "Try the proxy"): fetch() only, nothing from there runs or is displayed as a document.
 */
export function consoleCsp(styleNonce?: string, apiOrigin?: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    styleNonce ? `style-src 'self' 'nonce-${styleNonce}'` : "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    apiOrigin ? `connect-src 'self' ${apiOrigin}` : "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export const CONSOLE_CSP = consoleCsp();

/** Where `npm run build` puts the console (dist/console), seen from this file in dist/apps/api/src/http. */
export function consoleDirectory(): string | undefined {
  const dir = join(__dirname, '..', '..', '..', '..', 'console');
  return existsSync(join(dir, 'index.html')) ? dir : undefined;
}

function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  next();
}

/**
 * The console's route for the access log, the metrics and the trace: its assets or its pages, never the raw path
 * (one label per page or file would grow the metrics without bound).
 */
function consoleRoute(req: Request, _res: Response, next: NextFunction): void {
  accessRecord(req).route = req.path.startsWith('/assets/') ? '/console/assets/*' : '/console/*';
  next();
}

/**
 * Serves the built console at /console on the console's listener alone (console-origin.ts); on the API's port,
 * /console redirects there. Its hashed assets for a year, and index.html (never cached) for every other
 * path below /console, so a deep link (/console/logs?entity_type=card) opens the page it names. index.html is read
 * once and answered with a fresh random style nonce (128 bits) in both the CSP header and the page. Absent build:
 * nothing is mounted and /console answers 404 like any unknown path.
 */
export function mountConsole(app: NestExpressApplication, origins: Origins, dir = consoleDirectory()): void {
  app.use('/console', (req: Request, res: Response, next: NextFunction) => (onConsoleOrigin(req) ? next() : origins.redirectToConsole(req, res)));
  if (!dir) return;
  const index = readFileSync(join(dir, 'index.html'), 'utf8');
  const router = express.Router();
  router.use(consoleRoute);
  router.use(securityHeaders);
  router.use('/assets', express.static(join(dir, 'assets'), { immutable: true, maxAge: '365d', index: false, fallthrough: false }));
  router.use((req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const nonce = randomBytes(16).toString('base64');
    // An origin (scheme, host name checked against a strict pattern, port) or nothing: no character to escape.
    const apiOrigin = origins.apiOrigin(req);
    res.setHeader('Content-Security-Policy', consoleCsp(nonce, apiOrigin));
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(index.replaceAll(STYLE_NONCE_PLACEHOLDER, nonce).replaceAll(API_ORIGIN_PLACEHOLDER, apiOrigin ?? ''));
  });
  app.use('/console', router);
}
