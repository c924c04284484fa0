import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

let cached: string | undefined;

/**
 * The release this code is (SemVer), read once from the repository's package.json (`"name": "gatehouse"`): the first
 * one found walking up from this file, from src/ in tests as from dist/ in the image. Shown by /health/live,
 * `gatehouse --version`, the `gatehouse_build_info` metric and the OpenAPI document's info.version.
 */
export function gatehouseVersion(): string {
  if (cached !== undefined) return cached;
  for (let dir = __dirname; ; dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'gatehouse' && typeof manifest.version === 'string') return (cached = manifest.version);
    } catch {
      // No package.json here, or not readable: keep walking up.
    }
    if (dirname(dir) === dir) return (cached = '0.0.0-unknown');
  }
}
