import { createServer, Server, Socket } from 'node:net';

/**
 * A TCP forwarder on 127.0.0.1 in front of Redis: stopping it makes Redis unreachable for whoever connects
 * through it (connections are cut, new ones refused) until it starts again on the same port.
 */
export class TcpForwarder {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private frozen = false;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = new Socket();
      upstream.connect(this.targetPort, this.targetHost);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      if (this.frozen) for (const socket of [client, upstream]) socket.pause();
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    const address = server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
    this.server = server;
  }

  /** Holds every byte in both directions with the connections left open: a server (or a network) that hangs. */
  freeze(): void {
    this.frozen = true;
    for (const socket of this.sockets) socket.pause();
  }

  thaw(): void {
    this.frozen = false;
    for (const socket of this.sockets) socket.resume();
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
