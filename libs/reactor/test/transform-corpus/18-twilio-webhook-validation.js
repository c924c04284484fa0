// https://www.twilio.com/docs/usage/webhooks/webhooks-security
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  prepare: 'twilio',
  args: { body: { From: '+15550001111', Body: 'hello' }, headers: { 'X-Twilio-Signature': 'placeholder' } },
  configuration: { TWILIO_AUTH_TOKEN: 'token' },
  code: `const twilio = require('twilio');
module.exports = async function (req) {
  const valid = twilio.validateRequest(req.configuration.TWILIO_AUTH_TOKEN, req.args.headers['X-Twilio-Signature'], 'https://example.com/sms', req.args.body);
  return { body: { valid }, headers: {} };
};`,
};
