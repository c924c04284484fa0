// Imported first by main.ts: the database and Redis instrumentations must be in place before their drivers load.
import { gatehouseVersion } from '@gatehouse/config';
import { startTracing } from '@gatehouse/runtime/tracing';

startTracing('gatehouse-api', gatehouseVersion());
