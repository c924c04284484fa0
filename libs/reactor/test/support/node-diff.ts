import { createPrivateKey } from 'node:crypto';
import { createRequire } from 'node:module';
import { Reactor } from '../../src';
import { okBody } from './reactor-results';
import { ensureSandboxModules } from './sandbox-modules';

/**
 * The harness of the differential specs: each case is the body of an async function that gets `require` and `cfg`
 * (JSON data the spec passes, such as keys), run once in Node itself and once in a real sandbox; both must give the
 * same JSON (bytes compared as hex). Cases are deterministic, or check random outputs by a round trip.
 */
const nodeRequire = createRequire(__filename);

function encode(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v)));
}

export function describeAgainstNode(title: string, cases: Record<string, Record<string, string>>, cfg: () => unknown): void {
  describe(title, () => {
    let reactor: Reactor;
    let data: unknown;
    beforeAll(() => {
      ensureSandboxModules();
      data = cfg();
      reactor = new Reactor({ poolSize: 1, timeoutMs: 20000 });
    });
    afterAll(async () => {
      await reactor.close();
      // The Node side ran refused inputs (bad certificates, keys, primes) in this very process: an OpenSSL error they
      // left queued on this thread made the next suite's first createPrivateKey fail in a full run (the config's
      // signing key). One sacrificial call takes whatever is left.
      try {
        createPrivateKey({ key: Buffer.alloc(0), format: 'der', type: 'pkcs8' });
      } catch {
        // expected: it only drains the queue
      }
    });

    for (const [module, group] of Object.entries(cases)) {
      describe(module, () => {
        for (const [name, code] of Object.entries(group)) {
          it(name, async () => {
            const run = new Function('require', 'cfg', `return (async () => { ${code} })();`) as (r: NodeJS.Require, c: unknown) => Promise<unknown>;
            const inNode = encode(await run(nodeRequire, data));
            const result = await reactor.run({
              tenantId: 'tenant-diff',
              code: `module.exports = async (req) => { const cfg = JSON.parse(req.configuration.CFG); return { body: { value: await (async () => { ${code} })() } }; };`,
              args: { body: null, headers: {} },
              configuration: { CFG: JSON.stringify(data) },
            });
            expect(encode(okBody(result).value)).toEqual(inNode);
          });
        }
      });
    }
  });
}
