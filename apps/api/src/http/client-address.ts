import type { Request } from 'express';
import ipaddr from 'ipaddr.js';

/**
 * Each address as the throttle counts it, worked out once: the throttle asks on every successful authentication (to
 * remember where a key is used), and ipaddr.js's parsing and range checks are a noticeable part of a proxied request.
 */
const addresses = new Map<string, string>();
const MAX_REMEMBERED = 4096;

/**
 * The address failed authentications are counted against. `req.ip` is the socket's peer, or, when that peer is one
 * of TRUSTED_PROXIES (express's `trust proxy`, set in app.ts), the nearest X-Forwarded-For hop that is not trusted:
 * a client cannot pick its own address by sending the header. IPv4-mapped IPv6 counts as the IPv4 address, and
 * IPv6 by its /64, the smallest allocation a subscriber gets: walking through one's own /64 must not reset the count.
 */
export function clientAddressOf(req: Request): string | undefined {
  // Without an X-Forwarded-For, `req.ip` is the socket's peer whatever TRUSTED_PROXIES says: read it directly rather
  // than through express's proxy-addr, which splits the header and runs the trust function each time.
  const ip = req.headers['x-forwarded-for'] === undefined ? req.socket.remoteAddress : (req.ip ?? req.socket.remoteAddress);
  if (!ip) return undefined;
  let address = addresses.get(ip);
  if (address === undefined) {
    address = throttledAs(ip);
    // Bounded: behind TRUSTED_PROXIES the addresses come from a header; emptied when full, refilled as they come.
    if (addresses.size >= MAX_REMEMBERED) addresses.clear();
    addresses.set(ip, address);
  }
  return address;
}

function throttledAs(ip: string): string {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(ip);
  } catch {
    return ip;
  }
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const parts = v6.parts.slice(0, 4).map((part) => part.toString(16));
  return `${parts.join(':')}::/64`;
}
