import { FieldErrorCollector, ValidationError } from '../../shared/domain-error';
import { AnyDestinationPolicy } from '../../testing/permissive-proxy-fakes';
import { streamBackoffMs } from './deliver-log-streams';
import { resolveStreamSettings, StreamValidationContext, streamState } from './log-stream';

const context: StreamValidationContext = { policy: new AnyDestinationPolicy(), allowPlainSyslog: false };

function errorsOf(work: (errors: FieldErrorCollector) => void): Record<string, string[]> {
  const errors = new FieldErrorCollector();
  work(errors);
  try {
    errors.throwIfAny();
    return {};
  } catch (error) {
    return (error as ValidationError).fieldErrors ?? {};
  }
}

describe('log stream settings', () => {
  it('fills in defaults and splits the secrets out of the settings', () => {
    const errors = new FieldErrorCollector();
    const { settings, secrets } = resolveStreamSettings('splunk_hec', { url: 'https://splunk.example.com:8088/', token: 't' }, {}, context, errors);
    expect(errors.isEmpty).toBe(true);
    expect(settings).toEqual({ url: 'https://splunk.example.com:8088', source: 'gatehouse', sourcetype: 'gatehouse:audit', batch_size: 500 });
    expect(secrets).toEqual({ token: 't' });
  });

  it('keeps a stored secret the caller left out, and reports a missing required one', () => {
    expect(resolveStreamSettings('datadog', {}, { api_key: 'k' }, context, new FieldErrorCollector()).secrets).toEqual({ api_key: 'k' });
    expect(errorsOf((e) => resolveStreamSettings('datadog', {}, {}, context, e))).toEqual({ 'settings.api_key': ['is required'] });
  });

  it('reports every problem at once', () => {
    expect(
      errorsOf((e) => resolveStreamSettings('syslog', { host: 'bad host!', port: 0, tls: false, facility: 'x', app_name: 'a\u0000' }, {}, context, e)),
    ).toEqual({
      'settings.host': ['must be a host name or an IP address (at most 253 characters)'],
      'settings.port': ['must be an integer from 1 to 65535'],
      'settings.facility': ['must be an integer from 0 to 23'],
      'settings.app_name': ['must not contain control characters'],
      'settings.tls': ['must be true: this service sends syslog over TLS only (the operator has not allowed plain TCP)'],
    });
  });

  it('derives the state', () => {
    expect(streamState({ paused: true, lastError: 'x' })).toBe('paused');
    expect(streamState({ paused: false, lastError: 'x' })).toBe('failing');
    expect(streamState({ paused: false, lastError: null })).toBe('active');
  });

  it('backs off 1, 2, 4 ... times the base, capped', () => {
    const options = { backoffBaseMs: 1000, backoffMaxMs: 60_000 };
    expect([1, 2, 3, 4, 7, 8, 100].map((n) => streamBackoffMs(n, options))).toEqual([1000, 2000, 4000, 8000, 60_000, 60_000, 60_000]);
  });
});
