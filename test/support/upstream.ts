import { createServer, RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local HTTP destination for proxies, listening on 127.0.0.1 at a free port. */
export interface Upstream {
  server: Server;
  port: number;
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  origin: string;
  /** How many TCP connections it has accepted so far. */
  connections: () => number;
  /** Drops open connections and closes the server. */
  stop: () => Promise<void>;
}

export async function startUpstream(handler: RequestListener): Promise<Upstream> {
  let connections = 0;
  const server = createServer(handler);
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    origin: `http://127.0.0.1:${port}`,
    connections: () => connections,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
