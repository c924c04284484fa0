import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Reactor } from './index';
import { joinRuntime, RUNTIME_FILES, SANDBOX_RUNTIME_SOURCE } from './sandbox-runtime';
import { okBody } from '../test/support/reactor-results';

const RUNTIME_DIR = join(__dirname, 'runtime');
const fileText = (file: string) => readFileSync(join(RUNTIME_DIR, file), 'utf8');

describe('the sandbox runtime', () => {
  it('is the runtime files joined, in order, into one function', () => {
    expect(SANDBOX_RUNTIME_SOURCE).toBe(joinRuntime(fileText));
    let from = 0;
    for (const file of RUNTIME_FILES) {
      const at = SANDBOX_RUNTIME_SOURCE.indexOf(fileText(file), from);
      expect({ file, found: at >= from }).toEqual({ file, found: true });
      from = at + 1;
    }
    expect(SANDBOX_RUNTIME_SOURCE.startsWith('(function install(host, limitsJson) {')).toBe(true);
  });

  describe('inside an isolate', () => {
    let reactor: Reactor;
    beforeAll(() => {
      reactor = new Reactor({ poolSize: 1, timeoutMs: 3000 });
    });
    afterAll(() => reactor.close());

    it('runs the text of the files: the globals a transform sees are their functions, word for word', async () => {
      const result = await reactor.run({
        tenantId: 't',
        code: `module.exports = async () => ({ body: {
          btoa: btoa.toString(), setTimeout: setTimeout.toString(), log: console.log.toString(),
          URL: URL.toString(), Buffer: Buffer.toString() } });`,
        args: {},
        configuration: {},
      });
      const body = okBody(result);
      expect(fileText('text.js')).toContain(body.btoa);
      expect(fileText('timers.js')).toContain(body.setTimeout);
      expect(fileText('console.js')).toContain(body.log);
      expect(fileText('url.js')).toContain(body.URL);
      expect(fileText('buffer.js')).toContain(body.Buffer);
      expect(body.btoa).toMatch(/^function btoa\(data\)/);
    });

    it('leaves nothing of the host or of the runtime itself reachable by name', async () => {
      const result = await reactor.run({
        tenantId: 't',
        code: `module.exports = async () => ({ body: {
          names: ['host', 'limitsJson', 'limits', 'control', 'install', 'define', 'callHost', 'require', 'process',
            'module', 'exports', 'ivm', '__gatehouse_load'].filter((n) => { try { return typeof globalThis[n] !== 'undefined' || eval('typeof ' + n) !== 'undefined'; } catch (e) { return false; } }),
        } });`,
        args: {},
        configuration: {},
      });
      // module, exports and require are the CommonJS wrapper's parameters, seen through eval's scope only; process is the
      // sandbox's own (runtime/process.js), nothing of the host's.
      expect(okBody(result).names).toEqual(['require', 'process', 'module', 'exports']);
    });
  });
});
