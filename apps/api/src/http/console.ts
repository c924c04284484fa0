import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express, { NextFunction, Request, Response } from 'express';

/**
 * The console's policy: everything from this origin only (scripts, styles, the API calls), nothing inline, no
 * frames, no forms posted elsewhere. The console holds an API key, so an injected script must have nowhere to run.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

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
 * Serves the built console at /console: its hashed assets for a year, and index.html (never cached) for every other
 * path below /console, so a deep link (/console/logs?entity_type=card) opens the page it names. Absent build: nothing
 * is mounted and /console answers 404 like any unknown path.
 */
export function mountConsole(app: NestExpressApplication, dir = consoleDirectory()): void {
  if (!dir) return;
  const index = join(dir, 'index.html');
  const router = express.Router();
  router.use(securityHeaders);
  router.use('/assets', express.static(join(dir, 'assets'), { immutable: true, maxAge: '365d', index: false, fallthrough: false }));
  router.use((req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
  app.use('/console', router);
}
