/** Whether Redis answers; provided only when the service runs with REDIS_URL. */
export abstract class RedisHealth {
  abstract ping(): Promise<boolean>;
}
