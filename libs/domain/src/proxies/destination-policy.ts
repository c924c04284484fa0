/**
 * The operator's rules for where proxies may send traffic (PROXY_ALLOW_HTTP, PROXY_ALLOWED_PRIVATE_CIDRS).
 * The create-time check here only catches literal addresses; the adapter checks every resolved address
 * again when it connects, which is the check that counts.
 */
export abstract class DestinationPolicy {
  abstract readonly allowHttp: boolean;
  /** False when `hostname` is a literal IP address outside the public internet and the allowed ranges. */
  abstract allowsLiteralHost(hostname: string): boolean;
}
