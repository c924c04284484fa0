import { lookup as dnsLookup } from 'node:dns';
import { DynamicModule } from '@nestjs/common';
import { AppConfig } from '@gatehouse/config';
import { LogStreamDeliveryOptions } from '@gatehouse/domain';
import { LogStreamsModule, StreamOutboundGuard } from '@gatehouse/jobs';
import { AddressPolicy, guardedLookup, LookupFunction } from '@gatehouse/reactor';

/**
 * The proxies' destination policy (PROXY_ALLOW_HTTP, PROXY_ALLOWED_PRIVATE_CIDRS) as the guard of log streams'
 * connections: the same address rules and the same connect-time lookup as proxy invocations (no DNS-rebinding window).
 */
export function streamOutboundGuard(config: Pick<AppConfig, 'proxyAllowHttp' | 'proxyAllowedPrivateCidrs'>): StreamOutboundGuard {
  const policy = new AddressPolicy(config.proxyAllowHttp, config.proxyAllowedPrivateCidrs);
  const resolve: LookupFunction = (hostname, options, callback) => dnsLookup(hostname, options, callback);
  return { allowsAddress: (address) => policy.allowsAddress(address), lookup: guardedLookup(policy, resolve) as StreamOutboundGuard['lookup'] };
}

/** Log stream delivery for a process that runs background jobs (the worker, or the api without Redis). */
export function logStreamsModule(config: AppConfig, delivery: Partial<LogStreamDeliveryOptions> = {}, intervalMs?: number): DynamicModule {
  return LogStreamsModule.forRoot({
    guard: streamOutboundGuard(config),
    intervalMs: intervalMs ?? config.logStreamIntervalMs,
    delivery: { concurrency: config.logStreamConcurrency, ...delivery },
  });
}
