import { Clock } from '../shared/clock';
import { AuthenticationError, EscalationError } from '../shared/domain-error';
import { applicationExpired } from '../applications/application';
import { ApplicationRepository } from '../applications/application.repository';
import { requireAuthorityOver } from '../applications/authority';
import { Principal, principalOf } from '../applications/principal';

/**
 * Admits a call of the svc bridge (a transform's `svc` client calling this API as its proxy's application): the
 * bridge's listener proves where the call came from, this names who it acts as.
 */
export class AuthenticateSvcBridgeCall {
  constructor(
    private readonly applications: ApplicationRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * The principal of a proxy's application, for its transforms' svc bridge calls (which carry no key). `writerId`: the
   * application that last wrote the proxy (its modified_by), whose authority over the bound application is checked
   * again on every call, as it was when it wrote it (requireAuthorityOver): powers given to the bound application
   * since, beyond the writer's, would otherwise reach code the writer chose. A writer gone (deleted, expired) vouches
   * for nothing: the proxy must be written again by an application that holds what its application can do.
   */
  async execute(tenantId: string, applicationId: string, writerId?: string | null): Promise<Principal> {
    const application = await this.applications.findById(tenantId, applicationId);
    if (!application) throw new AuthenticationError("The proxy's application no longer exists");
    if (applicationExpired(application, this.clock.now())) throw new AuthenticationError("The proxy's application has expired");
    if (writerId !== undefined && writerId !== applicationId) {
      const writer = writerId === null ? null : await this.applications.findById(tenantId, writerId);
      if (!writer || applicationExpired(writer, this.clock.now())) {
        throw new EscalationError(
          "svc is refused: the application that last wrote this proxy no longer exists; write the proxy again with an application that holds what the proxy's application can do",
        );
      }
      try {
        requireAuthorityOver(principalOf(writer), application, 'lend svc to');
      } catch (error) {
        if (!(error instanceof EscalationError)) throw error;
        throw new EscalationError(`svc is refused: ${error.message.replace(/^This application/, 'the application that last wrote this proxy')}`);
      }
    }
    return principalOf(application);
  }
}
