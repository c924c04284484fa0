import { lookup as dnsLookup, LookupAddress, LookupAllOptions, LookupOneOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { IpDestinationPolicy } from './destination-policy';

/** The destination resolved to (or is) an address proxies may not reach. */
export class DestinationRefusedError extends Error {
  readonly code = 'GATEHOUSE_DESTINATION_REFUSED';

  constructor() {
    super('The destination resolves to a loopback, private, link-local or otherwise non-public address, which proxies may not reach');
    this.name = 'DestinationRefusedError';
  }
}

export type LookupFunction = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export interface DestinationAgentOptions {
  policy: IpDestinationPolicy;
  connectTimeoutMs: number;
  /** DNS resolution; a seam for tests, the system resolver otherwise. */
  lookup?: LookupFunction;
  keepAliveTimeoutMs?: number;
}

export type NetLookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net.connect that resolves every address of the name and fails with
 * DestinationRefusedError when any of them is not allowed, so the socket never starts connecting.
 */
export function guardedLookup(policy: IpDestinationPolicy, resolve: LookupFunction) {
  return (hostname: string, lookupOptions: LookupOneOptions | LookupAllOptions, callback: NetLookupCallback): void => {
    resolve(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      if (addresses.length === 0) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
      if (addresses.some((a) => !policy.allowsAddress(a.address))) return callback(new DestinationRefusedError(), []);
      if (lookupOptions.all) return callback(null, addresses);
      return callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
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
