import { AddressPolicy } from '@gatehouse/reactor';
import { DestinationPolicy } from '@gatehouse/domain';

/**
 * The domain's DestinationPolicy port over the address rules every outbound connection follows (AddressPolicy, shared
 * with the sandbox processes, which apply it to transforms' own requests).
 */
export class IpDestinationPolicy extends DestinationPolicy {
  private readonly addresses: AddressPolicy;

  constructor(
    readonly allowHttp: boolean,
    readonly allowedCidrs: readonly string[],
  ) {
    super();
    this.addresses = new AddressPolicy(allowHttp, allowedCidrs);
  }

  allowsLiteralHost(hostname: string): boolean {
    return this.addresses.allowsLiteralHost(hostname);
  }

  /** Whether a resolved (or literal) address may be connected to. */
  allowsAddress(address: string): boolean {
    return this.addresses.allowsAddress(address);
  }
}
