import { Controller, Get, HttpCode, Inject, Optional, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { gatehouseVersion } from '@gatehouse/config';
import { RedisHealth } from '@gatehouse/jobs';
import { checkWithin } from '@gatehouse/runtime';
import { PublicRoute } from '../auth/auth.decorators';
import { Draining } from './draining';

// `{"status": "ok", "database": "up", "redis": "up"}`: a status and one member per dependency checked.
const HEALTH_SCHEMA = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string', example: 'ok' } },
  additionalProperties: { type: 'string', example: 'up' },
};

// `{"status": "ok", "version": "1.0.0"}`: the release (SemVer) this process runs.
const LIVE_SCHEMA = {
  type: 'object',
  required: ['status', 'version'],
  properties: { status: { type: 'string', example: 'ok' }, version: { type: 'string', example: '1.0.0' } },
  additionalProperties: false,
};

@ApiTags('health')
@PublicRoute()
@Controller('health')
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly draining: Draining,
    @Optional() @Inject(RedisHealth) private readonly redis?: RedisHealth,
  ) {}

  @Get('live')
  @ApiOperation({ operationId: 'getLiveness', summary: 'Liveness: the process runs, and which release it is' })
  @ApiOkResponse({ schema: LIVE_SCHEMA })
  @HttpCode(200)
  live(): { status: 'ok'; version: string } {
    return { status: 'ok', version: gatehouseVersion() };
  }

  @Get('ready')
  @ApiOperation({ operationId: 'getReadiness', summary: 'Readiness: the database (and Redis) answer' })
  @ApiOkResponse({ schema: HEALTH_SCHEMA })
  @ApiServiceUnavailableResponse({ description: 'A dependency is down, or the process is draining', schema: HEALTH_SCHEMA })
  async ready(@Res({ passthrough: true }) res: Response): Promise<Record<string, string>> {
    if (this.draining.active) {
      res.status(503);
      return { status: 'draining' };
    }
    const [database, redis] = await Promise.all([
      checkWithin(this.dataSource.query('SELECT 1').then(() => true)),
      this.redis ? checkWithin(this.redis.ping()) : Promise.resolve(undefined),
    ]);
    const ok = database && redis !== false;
    res.status(ok ? 200 : 503);
    return {
      status: ok ? 'ok' : 'unavailable',
      database: database ? 'up' : 'down',
      ...(redis === undefined ? {} : { redis: redis ? 'up' : 'down' }),
    };
  }
}
