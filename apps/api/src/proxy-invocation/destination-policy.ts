import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { DestinationPolicy } from '@gatehouse/domain';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

// Global unicast IPv6 is 2000::/3; anything outside it that ipaddr.js still calls 'unicast' is unassigned.
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/**
 * Which addresses a proxy may connect to: public unicast only, unless inside an operator-allowed range
 * (PROXY_ALLOWED_PRIVATE_CIDRS). Loopback, private, link-local, unique-local, CGNAT, multicast, reserved,
 * unspecified and translated forms (IPv4-mapped, NAT64, 6to4, Teredo) are all refused.
 */
export class IpDestinationPolicy extends DestinationPolicy {
  private readonly allowed: [Address, number][];

  constructor(
    readonly allowHttp: boolean,
    allowedCidrs: readonly string[],
  ) {
    super();
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
