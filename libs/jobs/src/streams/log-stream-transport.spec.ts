import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { signWebhook } from './log-stream-transport';

describe('signWebhook', () => {
  it('signs as the Standard Webhooks library does, and its signatures verify with it', () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const at = new Date();
    const seconds = String(Math.floor(at.getTime() / 1000));
    for (const body of ['{}', JSON.stringify({ records: [{ message: 'ünïcode ✓ "quoted"' }] }), JSON.stringify({ padding: 'x'.repeat(300_000) })]) {
      const signature = signWebhook(secret, 'msg_1_2', seconds, body);
      expect(signature).toBe(new Webhook(secret).sign('msg_1_2', at, body));
      const headers = { 'webhook-id': 'msg_1_2', 'webhook-timestamp': seconds, 'webhook-signature': signature };
      expect(() => new Webhook(secret).verify(body, headers)).not.toThrow();
      expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
    }
  });
});
