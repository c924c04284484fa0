import { heartbeatIsFresh, STALE_AFTER_MS } from './heartbeat';

// The worker's container healthcheck (docker-compose.yml): exit 0 while its heartbeat is fresh (heartbeat.ts).
if (heartbeatIsFresh()) process.exit(0);
process.stderr.write(`gatehouse worker: no heartbeat within ${STALE_AFTER_MS / 1000} s\n`);
process.exit(1);
