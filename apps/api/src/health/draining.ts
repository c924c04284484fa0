/**
 * Set once the process was asked to stop (SIGTERM): from then on /health/ready answers 503, so load balancers take
 * this replica out of rotation while it still serves what reaches it, before it stops accepting connections.
 */
export class Draining {
  private started = false;

  begin(): void {
    this.started = true;
  }

  get active(): boolean {
    return this.started;
  }
}
