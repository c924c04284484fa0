import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect as netConnect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ReceivedRecord } from './http-receivers';
import type { TestCa } from './test-ca';

/** A free TCP port on 127.0.0.1 (closed again at once, for a server that cannot take port 0). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function rsyslogAvailable(): boolean {
  return existsSync('/usr/sbin/rsyslogd');
}

/**
 * A real rsyslog (Debian's rsyslogd, in the foreground) listening with imtcp on 127.0.0.1: over TLS with the gtls
 * driver and the test CA's server certificate (RFC 5425), or plain TCP. Every message it receives is written whole
 * (`%rawmsg%`, one per line) to a file the test reads.
 */
export class RsyslogReceiver {
  readonly dir = mkdtempSync(join(tmpdir(), 'gatehouse-rsyslog-'));
  readonly output = join(this.dir, 'received.log');
  port = 0;
  private process?: ChildProcess;
  private stderr = '';

  constructor(
    private readonly ca: TestCa,
    readonly tls: boolean,
  ) {}

  async start(port?: number): Promise<this> {
    this.port = port ?? (await freePort());
    const conf = join(this.dir, 'rsyslog.conf');
    const driver = this.tls
      ? `global(DefaultNetstreamDriverCAFile="${this.ca.caPath}" DefaultNetstreamDriverCertFile="${this.ca.certPath}" DefaultNetstreamDriverKeyFile="${this.ca.keyPath}")
module(load="imtcp" StreamDriver.Name="gtls" StreamDriver.Mode="1" StreamDriver.AuthMode="anon")`
      : 'module(load="imtcp")';
    writeFileSync(
      conf,
      `global(workDirectory="${this.dir}" maxMessageSize="64k")
${driver}
input(type="imtcp" address="127.0.0.1" port="${this.port}")
template(name="whole" type="string" string="%rawmsg%\\n")
action(type="omfile" file="${this.output}" template="whole" flushOnTXEnd="on" asyncWriting="off")
`,
    );
    const child = spawn('/usr/sbin/rsyslogd', ['-n', '-f', conf, '-i', join(this.dir, 'rsyslogd.pid')], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.process = child;
    // Listening once a connection is accepted.
    const until = Date.now() + 10_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`rsyslogd exited ${child.exitCode}: ${this.stderr}`);
      if (await canConnect(this.port)) return this;
      if (Date.now() > until) throw new Error(`rsyslogd did not listen on ${this.port}: ${this.stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await exited;
  }

  /** Every message received so far, parsed: the structured data's position and hash, and the JSON record. */
  messages(): { position: number; hash: string; header: string; record: ReceivedRecord }[] {
    if (!existsSync(this.output)) return [];
    return readFileSync(this.output, 'utf8')
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => {
        const sd = /\[gatehouse@32473 position="(\d+)" hash="([0-9a-f]{64})" id="[^"]+" tenant_id="[^"]+"\]/.exec(line);
        const bom = line.indexOf('\uFEFF');
        if (!sd || bom < 0) throw new Error(`not a stream message: ${line.slice(0, 200)}`);
        return { position: Number(sd[1]), hash: sd[2]!, header: line.slice(0, bom), record: JSON.parse(line.slice(bom + 1)) as ReceivedRecord };
      });
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = netConnect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
