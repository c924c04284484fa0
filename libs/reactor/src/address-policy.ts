import type { LookupAddress, LookupAllOptions, LookupOneOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

// Global unicast IPv6 is 2000::/3; anything outside it that ipaddr.js still calls 'unicast' is unassigned.
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/**
 * Which addresses outbound traffic may connect to, proxy destinations and transforms' own requests alike: public
 * unicast only, unless inside an operator-allowed range (PROXY_ALLOWED_PRIVATE_CIDRS). Loopback, private,
 * link-local, unique-local, CGNAT, multicast, reserved, unspecified and translated forms (IPv4-mapped, NAT64,
 * 6to4, Teredo) are all refused. It lives here because the sandbox processes enforce it too (their transforms'
 * `fetch` and `http.request`), and they load nothing but this library.
 */
export class AddressPolicy {
  private readonly allowed: [Address, number][];

  constructor(
    readonly allowHttp: boolean,
    allowedCidrs: readonly string[],
  ) {
    this.allowed = allowedCidrs.map((cidr) => ipaddr.parseCIDR(cidr));
  }

  allowsLiteralHost(hostname: string): boolean {
    const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
    // A name is resolved and checked when connecting; only literal addresses can be judged now.
    return isIP(bare) === 0 || this.allowsAddress(bare);
  }

  /** Whether a resolved (or literal) address may be connected to. */
  allowsAddress(address: string): boolean {
    let parsed: Address;
    try {
      parsed = ipaddr.parse(address);
    } catch {
      return false;
    }
    // ::ffff:127.0.0.1 reaches 127.0.0.1: judge the IPv4 address it carries.
    const effective = parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress() ? (parsed as ipaddr.IPv6).toIPv4Address() : parsed;
    const candidates = effective === parsed ? [parsed] : [parsed, effective];
    if (this.allowed.some(([range, bits]) => candidates.some((c) => c.kind() === range.kind() && c.match(range, bits)))) return true;
    if (effective.range() !== 'unicast') return false;
    return effective.kind() === 'ipv4' || effective.match(IPV6_GLOBAL_UNICAST);
  }
}

/** The destination resolved to (or is) an address outbound traffic may not reach. */
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

export type NetLookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net.connect that resolves every address of the name and fails with DestinationRefusedError when
 * any of them is not allowed, so the socket never starts connecting. The socket connects to exactly the address
 * checked here: a DNS answer cannot change between the check and the connection (no rebinding window).
 */
export function guardedLookup(policy: Pick<AddressPolicy, 'allowsAddress'>, resolve: LookupFunction) {
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
