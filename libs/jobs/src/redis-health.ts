import type IORedis from 'ioredis';

/** Whether Redis answers; provided only when the service runs with REDIS_URL. */
export abstract class RedisHealth {
  abstract ping(): Promise<boolean>;
}

export class IoredisHealth extends RedisHealth {
  constructor(private readonly redis: IORedis) {
    super();
  }

  async ping(): Promise<boolean> {
    if (this.redis.status !== 'ready') return false;
    return (await this.redis.ping().catch(() => '')) === 'PONG';
  }
}
