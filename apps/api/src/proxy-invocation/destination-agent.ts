import { lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { DestinationRefusedError, guardedLookup, type LookupFunction } from '@gatehouse/reactor';
import { IpDestinationPolicy } from './destination-policy';

// The connect-time guard lives with the address rules (@gatehouse/reactor): the sandbox processes apply it too.
export { DestinationRefusedError, guardedLookup, type LookupFunction } from '@gatehouse/reactor';

export interface DestinationAgentOptions {
  policy: IpDestinationPolicy;
  connectTimeoutMs: number;
  /** DNS resolution; a seam for tests, the system resolver otherwise. */
  lookup?: LookupFunction;
  keepAliveTimeoutMs?: number;
}

/**
 * The one pooled, keep-alive dispatcher every proxy invocation goes through. Its connector checks each
 * address right before connecting: literal hosts directly, names through a lookup that refuses when any
 * resolved address is not allowed. The socket connects to exactly the address that was checked, so a DNS
 * answer cannot change between the check and the connection (no rebinding window).
 */
export function createDestinationAgent(options: DestinationAgentOptions): Agent {
  const resolve: LookupFunction = options.lookup ?? ((hostname, opts, callback) => dnsLookup(hostname, opts, callback));
  const checkedLookup = guardedLookup(options.policy, resolve);
  const connector = buildConnector({ timeout: options.connectTimeoutMs, allowH2: false, lookup: checkedLookup as never });
  const connect: buildConnector.connector = (connectOptions, callback) => {
    // net.connect skips the lookup for a literal address, so literals are judged here.
    if (isIP(connectOptions.hostname) !== 0 && !options.policy.allowsAddress(connectOptions.hostname)) {
      callback(new DestinationRefusedError(), null);
      return;
    }
    connector(connectOptions, callback);
  };
  return new Agent({
    connect,
    allowH2: false,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 10_000,
    // Redirects are returned to the caller as they are (CONTRACT.md section 7); undici never follows them here.
  });
}
