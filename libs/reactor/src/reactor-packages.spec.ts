import { Reactor } from './index';
import { okBody } from '../test/support/reactor-results';
import { ensureSandboxModules } from '../test/support/sandbox-modules';

/**
 * Every allowlisted package loads in a sandbox and does something without the network (what needs outbound HTTP fails
 * at request time, not at require). One sandbox process each: several of the largest packages' contexts kept warm in one
 * 64 MiB isolate leave garbage the post-run heap check (SandboxIsolate.checkHeap) may count against the next run.
 */
const SMOKE: Record<string, string> = {
  axios: `const a = require('axios'); return typeof a.create().get;`,
  'node-fetch': `const f = require('node-fetch'); return new f.Headers({ A: '1' }).get('a') + typeof f.default;`,
  openpgp: `const o = require('openpgp'); const m = await o.encrypt({ message: await o.createMessage({ text: 'pan' }), passwords: ['pw'] });
    const { data } = await o.decrypt({ message: await o.readMessage({ armoredMessage: m }), passwords: ['pw'] }); return data;`,
  exceljs: `const E = require('exceljs'); const wb = new E.Workbook(); wb.addWorksheet('s').addRow(['card', '4242']); const b = await wb.csv.writeBuffer(); return Buffer.from(b).toString().trim();`,
  'mastercard-client-encryption': `const m = require('mastercard-client-encryption'); return typeof m.FieldLevelEncryption + typeof m.JweEncryption;`,
  stripe: `const s = require('stripe')('sk_test_123'); return typeof s.customers.create;`,
  twilio: `const t = require('twilio')('AC' + '0'.repeat(32), 'token'); return typeof t.messages.create;`,
  braintree: `const b = require('braintree'); const g = new b.BraintreeGateway({ environment: b.Environment.Sandbox, merchantId: 'm', publicKey: 'p', privateKey: 'k' }); return typeof g.transaction.sale;`,
  '@adyen/api-library': `const { Client, CheckoutAPI } = require('@adyen/api-library'); const c = new Client({ apiKey: 'k', environment: 'TEST' }); return typeof new CheckoutAPI(c).PaymentsApi.payments;`,
  'dwolla-v2': `const D = require('dwolla-v2'); const c = new D.Client({ key: 'k', secret: 's', environment: 'sandbox' }); return typeof c.get;`,
  soap: `const s = require('soap'); return typeof s.createClientAsync;`,
  yup: `const y = require('yup'); return String(y.string().email().isValidSync('a@b.co'));`,
  'csv-parse': `const { parse } = require('csv-parse'); return await new Promise((resolve, reject) => parse('a,b\\n1,2', (e, rows) => (e ? reject(e) : resolve(JSON.stringify(rows)))));`,
};
const EXPECTED: Record<string, string> = {
  axios: 'function',
  'node-fetch': '1function',
  openpgp: 'pan',
  exceljs: 'card,4242',
  'mastercard-client-encryption': 'functionfunction',
  stripe: 'function',
  twilio: 'function',
  braintree: 'function',
  '@adyen/api-library': 'function',
  'dwolla-v2': 'function',
  soap: 'function',
  yup: 'true',
  'csv-parse': '[["a","b"],["1","2"]]',
};

describe('Reactor: every allowlisted package loads and runs', () => {
  beforeAll(() => ensureSandboxModules());

  it.each(Object.keys(SMOKE))('%s', async (name) => {
    const reactor = new Reactor({ poolSize: 1, timeoutMs: 15000 });
    const result = await reactor.run({
      tenantId: `tenant-${name}`,
      code: `module.exports = async () => { try { return { body: await (async () => { ${SMOKE[name]} })() }; } catch (e) { return { body: 'failed: ' + e.message }; } };`,
      args: { body: null, headers: {} },
      configuration: {},
    });
    const stats = reactor.stats();
    await reactor.close();
    expect(okBody(result)).toBe(EXPECTED[name]);
    // Every bundle it loaded came from the build's code cache (made by the build's producer, accepted by this process).
    expect(stats.modulesCompiled).toBeGreaterThan(0);
    expect(stats).toMatchObject({ modulesFromCodeCache: stats.modulesCompiled, modulesCodeCacheRejected: 0 });
  });
});
