import { rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import { sampledGauge } from '@gatehouse/runtime';

/**
 * The worker serves no HTTP, so its container healthcheck reads a file instead: every few seconds, while the
 * database and Redis both answer, the worker rewrites it; `node dist/apps/worker/src/healthcheck.js` (the compose
 * healthcheck) fails once it is older than STALE_AFTER_MS, i.e. when the worker hangs or lost a backing service.
 * WORKER_HEARTBEAT_FILE moves the file (several workers on one host, tests).
 */
export const HEARTBEAT_FILE = process.env.WORKER_HEARTBEAT_FILE?.trim() || join(tmpdir(), 'gatehouse-worker.heartbeat');
export const HEARTBEAT_INTERVAL_MS = 5_000;
export const STALE_AFTER_MS = 30_000;

export function startHeartbeat(healthy: () => Promise<boolean>, file = HEARTBEAT_FILE, intervalMs = HEARTBEAT_INTERVAL_MS): () => void {
  let running = false;
  const beat = async () => {
    if (running) return;
    running = true;
    try {
      if (await healthy()) writeFileSync(file, `${new Date().toISOString()}\n`);
    } catch {
      // Not healthy: the file ages, and the healthcheck says so.
    } finally {
      running = false;
    }
  };
  void beat();
  const timer = setInterval(() => void beat(), intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    rmSync(file, { force: true });
  };
}

/** True when the heartbeat file was written within `staleAfterMs`. */
export function heartbeatIsFresh(file = HEARTBEAT_FILE, staleAfterMs = STALE_AFTER_MS, now = Date.now()): boolean {
  try {
    return now - statSync(file).mtimeMs <= staleAfterMs;
  } catch {
    return false;
  }
}

/**
 * `gatehouse_worker_heartbeat_timestamp_seconds`: when the worker last found the database and Redis answering
 * (the heartbeat file's time; absent before the first beat). `time() - it` is the alert rules' stale heartbeat.
 */
export function registerHeartbeatMetric(registry: Registry, file = HEARTBEAT_FILE): void {
  sampledGauge(registry, 'gatehouse_worker_heartbeat_timestamp_seconds', 'Unix time of the last heartbeat: the database and Redis both answered', () => {
    try {
      return [{ value: Math.floor(statSync(file).mtimeMs) / 1000 }];
    } catch {
      return [];
    }
  });
}
