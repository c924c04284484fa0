import { Clock } from '../shared/clock';
import { AuthenticationError } from '../shared/domain-error';
import { AuthenticationThrottle, ClientAddress } from '../rate-limits/authentication-throttle';
import { looksLikeApiKey, hashApiKey } from './api-key';
import { Application, applicationExpired } from './application';
import { ApplicationRepository } from './application.repository';
import { LastUseRecorder } from './last-use';
import { Principal, principalOf } from './principal';

/**
 * Resolves an `SVC-API-KEY` to its application on every request. The repository may cache (persistence's
 * CachedApplicationRepository, invalidated by a shared version), but a regenerate, delete or permission
 * change is seen by every replica on the very next request. A key presented and refused counts as a failure of
 * `client` (its address) in the throttle; a missing key is no guess and is not counted.
 */
export class AuthenticateApiKey {
  constructor(
    private readonly applications: ApplicationRepository,
    private readonly clock: Clock,
    private readonly throttle?: AuthenticationThrottle,
    private readonly lastUse?: LastUseRecorder,
  ) {}

  /**
   * `client` may be a function, called only when the address is needed (a throttled address is known, or the key
   * fails). `onCandidate`, when given, is called before the key is verified with the principal the repository's memory
   * holds for it, if any (unverified: the key may have been revoked since): for work that may start alongside the
   * verification and be dropped when the verified principal differs (the guard's rate-limit count).
   */
  async execute(
    key: string | undefined,
    client?: ClientAddress,
    onCandidate?: (candidate: Principal) => void,
  ): Promise<{ principal: Principal; application: Application }> {
    if (!key) throw new AuthenticationError('The SVC-API-KEY header is required');
    const keyHash = looksLikeApiKey(key) ? hashApiKey(key) : undefined;
    // A blocked address is refused here, except for a key that authenticated from it before (its neighbours').
    this.throttle?.check(client, keyHash);
    if (keyHash === undefined) return this.refuse(client, 'The SVC-API-KEY is not valid');
    if (onCandidate) {
      const candidate = this.applications.cachedByKeyHash(keyHash);
      if (candidate) onCandidate(principalOf(candidate));
    }
    const application = await this.applications.findByKeyHash(keyHash);
    if (!application) return this.refuse(client, 'The SVC-API-KEY is not valid');
    // The lookup also finds the key a regenerate replaced; it counts only until its overlap ends.
    if (application.keyHash !== keyHash && !this.previousKeyValid(application, keyHash)) {
      return this.refuse(client, 'The SVC-API-KEY is not valid');
    }
    if (applicationExpired(application, this.clock.now())) return this.refuse(client, 'The application of this SVC-API-KEY has expired');
    this.lastUse?.touch(application.id);
    this.throttle?.succeeded(client, keyHash);
    const principal = principalOf(application);
    return { principal: application.keyHash === keyHash ? principal : { ...principal, viaPreviousKey: true }, application };
  }

  private async refuse(client: ClientAddress, message: string): Promise<never> {
    const error = new AuthenticationError(message);
    if (this.throttle) return this.throttle.fail(client, error);
    throw error;
  }

  private previousKeyValid(application: Application, keyHash: string): boolean {
    return (
      application.previousKeyHash === keyHash &&
      application.previousKeyExpiresAt !== null &&
      application.previousKeyExpiresAt.getTime() > this.clock.now().getTime()
    );
  }
}
