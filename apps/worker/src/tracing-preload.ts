// Imported first by main.ts: the database and Redis instrumentations must be in place before their drivers load.
import { startTracing } from '@gatehouse/runtime/tracing';

startTracing('gatehouse-worker');
