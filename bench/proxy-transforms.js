'use strict';
// What bench:proxy sends and the transforms it runs (also run without HTTP by bench/profile-reactor.js).

const PAYLOAD = JSON.stringify({
  id: 'ord_7f3a9c',
  amount: 1250,
  currency: 'eur',
  card: { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' },
  customer: { name: 'Ada Lovelace', email: 'ada@example.com' },
  metadata: { source: 'bench', attempt: 1 },
});

const TRIVIAL = 'module.exports = async (req) => ({ body: req.args.body, headers: req.args.headers });';

const REALISTIC_REQUEST = `
const crypto = require('crypto');
module.exports = async function (req) {
  const { body, headers } = req.args;
  const card = body.card || {};
  const rewritten = {
    reference: body.id,
    amount: { value: body.amount, currency: String(body.currency).toUpperCase() },
    payment_method: { type: 'card', last4: String(card.number).slice(-4), expiry: card.exp_month + '/' + card.exp_year },
    customer: { name: body.customer.name, email: body.customer.email.toLowerCase() },
    metadata: Object.assign({}, body.metadata, { forwarded_at: new Date().toISOString() }),
  };
  const payload = JSON.stringify(rewritten);
  const signature = crypto.createHmac('sha256', req.configuration.SIGNING_SECRET).update(payload).digest('hex');
  return { body: rewritten, headers: Object.assign({}, headers, { 'x-signature': signature, 'x-request-id': crypto.randomUUID() }) };
};`;

const REALISTIC_RESPONSE = `
module.exports = async function (req) {
  const { body, headers, status } = req.args;
  return {
    status,
    headers: { 'content-type': 'application/json', 'x-upstream-status': String(status) },
    body: { ok: status < 400, reference: body.reference, amount: body.amount, signed: true },
  };
};`;

// A transform over a bundled package: node-jose JWE encryption of the body (RSA-OAEP-256 + A256GCM) to a partner's key
// from the configuration; the key is parsed once per warm context.
const JWE_REQUEST = `
const jose = require('node-jose');
let key = null;
module.exports = async function (req) {
  key = key || await jose.JWK.asKey(JSON.parse(req.configuration.PARTNER_JWK));
  const jwe = await jose.JWE.createEncrypt({ format: 'compact' }, key).update(JSON.stringify(req.args.body)).final();
  return { body: { jwe }, headers: Object.assign({}, req.args.headers, { 'content-type': 'application/json' }) };
};`;

// A transform that calls another service first: fetch from a local server (the echo upstream) and pass a value of its
// answer on as a header. One outbound request per invocation, made by the sandbox process.
const FETCH_REQUEST = `
module.exports = async function (req) {
  const res = await fetch(req.configuration.LOOKUP_URL, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"lookup":1}' });
  const answer = await res.text();
  return { body: req.args.body, headers: Object.assign({}, req.args.headers, { 'x-lookup-bytes': String(answer.length) }) };
};`;

/** A partner's RSA public key as a JWK, for JWE_REQUEST. */
function partnerJwk() {
  const { generateKeyPairSync } = require('node:crypto');
  const jwk = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' });
  return JSON.stringify({ ...jwk, alg: 'RSA-OAEP-256', use: 'enc', kid: 'partner' });
}

module.exports = { FETCH_REQUEST, JWE_REQUEST, PAYLOAD, REALISTIC_REQUEST, REALISTIC_RESPONSE, TRIVIAL, partnerJwk };
