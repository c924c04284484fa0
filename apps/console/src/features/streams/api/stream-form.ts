import type { components } from '../../../api/schema.gen';

// The log stream form's model: each kind's settings as fields, what a create sends, where the API's messages go.

export type LogStream = components['schemas']['LogStreamResponse'];
export type CreatedLogStream = components['schemas']['CreatedLogStreamResponse'];
type CreateBody = components['schemas']['CreateLogStreamDto'];

export const STREAM_KINDS = ['https', 'syslog', 'splunk_hec', 'datadog'] as const;
export type StreamKind = (typeof STREAM_KINDS)[number];

export const KIND_LABELS: Record<StreamKind, string> = {
  https: 'HTTPS (signed per Standard Webhooks)',
  syslog: 'Syslog (RFC 5424 over TCP, TLS)',
  splunk_hec: 'Splunk HTTP Event Collector',
  datadog: 'Datadog logs intake',
};

/** One setting as the form edits it: `secret` ones are write-only (a password field, never shown back). */
export interface SettingField {
  name: string;
  label: string;
  type: 'text' | 'number' | 'checkbox' | 'secret' | 'pem';
  required?: boolean;
  /** The service's default, shown as the placeholder (an empty field sends nothing, so the default applies). */
  placeholder?: string;
  hint?: string;
}

const COMMON: SettingField[] = [
  { name: 'batch_size', label: 'Batch size', type: 'number', placeholder: '500', hint: 'Logs a delivery carries, 1 to 1000.' },
  {
    name: 'tls_ca',
    label: 'Certificates to trust (PEM, optional)',
    type: 'pem',
    hint: "Beside the system's CAs: for a receiver with a certificate of your own CA.",
  },
];

/** Each kind's settings (docs/audit-trail.md#streams), as the API checks them. */
export const KIND_FIELDS: Record<StreamKind, SettingField[]> = {
  https: [
    {
      name: 'url',
      label: 'Endpoint URL',
      type: 'text',
      required: true,
      placeholder: 'https://siem.example.com/gatehouse',
      hint: 'JSON batches are POSTed here, signed per Standard Webhooks; the signing secret is shown once, after creation.',
    },
    ...COMMON,
  ],
  syslog: [
    { name: 'host', label: 'Host', type: 'text', required: true, placeholder: 'logs.example.com' },
    { name: 'port', label: 'Port', type: 'number', placeholder: '6514' },
    { name: 'tls', label: 'TLS (RFC 5425); off only where the operator allows plain TCP', type: 'checkbox' },
    { name: 'app_name', label: 'APP-NAME', type: 'text', placeholder: 'gatehouse' },
    { name: 'hostname', label: 'HOSTNAME', type: 'text', placeholder: 'gatehouse' },
    { name: 'facility', label: 'Facility (0 to 23)', type: 'number', placeholder: '13' },
    ...COMMON,
  ],
  splunk_hec: [
    { name: 'url', label: 'Collector URL', type: 'text', required: true, placeholder: 'https://splunk.example.com:8088' },
    { name: 'token', label: 'HEC token', type: 'secret', required: true, hint: 'Write-only: stored sealed, never shown again.' },
    { name: 'index', label: 'Index', type: 'text' },
    { name: 'source', label: 'Source', type: 'text', placeholder: 'gatehouse' },
    { name: 'sourcetype', label: 'Source type', type: 'text', placeholder: 'gatehouse:audit' },
    { name: 'host', label: 'Host field', type: 'text' },
    ...COMMON,
  ],
  datadog: [
    { name: 'url', label: 'Intake URL', type: 'text', placeholder: 'https://http-intake.logs.datadoghq.com' },
    { name: 'api_key', label: 'API key', type: 'secret', required: true, hint: 'Write-only: stored sealed, never shown again.' },
    { name: 'service', label: 'Service', type: 'text', placeholder: 'gatehouse' },
    { name: 'source', label: 'Source', type: 'text', placeholder: 'gatehouse' },
    { name: 'tags', label: 'Tags', type: 'text', placeholder: 'env:prod,team:security' },
    { name: 'hostname', label: 'Hostname', type: 'text' },
    ...COMMON,
  ],
};

export type SettingValues = Record<string, string | boolean>;

/** What the stream form holds: the settings typed for each kind (a kind change keeps what was typed for the other). */
export interface StreamDraft {
  name: string;
  kind: StreamKind;
  start: 'now' | 'beginning';
  settings: Record<StreamKind, SettingValues>;
}

export const EMPTY_DRAFT: StreamDraft = {
  name: '',
  kind: 'https',
  start: 'now',
  settings: { https: {}, syslog: { tls: true }, splunk_hec: {}, datadog: {} },
};

/**
 * POST /logs/streams: the chosen kind's settings; an empty field is left out (the service's default applies), a number
 * goes as typed for the API to judge, a checkbox as its boolean.
 */
export function createBody(draft: StreamDraft): CreateBody {
  const values = draft.settings[draft.kind];
  const settings: Record<string, unknown> = {};
  for (const field of KIND_FIELDS[draft.kind]) {
    const value = values[field.name];
    if (field.type === 'checkbox') settings[field.name] = value === true;
    else if (typeof value === 'string' && value.trim() !== '')
      settings[field.name] = field.type === 'number' ? Number(value) : field.type === 'pem' ? value : value.trim();
  }
  return { name: draft.name, kind: draft.kind, settings, start: draft.start };
}

/** The paths the form shows a message at: the name, the kind, the start, and each setting of `kind`. */
export function shownPaths(kind: StreamKind): Set<string> {
  return new Set(['name', 'kind', 'start', 'settings', ...KIND_FIELDS[kind].map((f) => `settings.${f.name}`)]);
}

/** Where a stream sends: its URL, or a syslog host and port. */
export function destinationOf(stream: LogStream): string {
  const s = stream.settings as Record<string, unknown>;
  if (stream.kind === 'syslog') return `${String(s.host)}:${String(s.port ?? 6514)}${s.tls === false ? ' (plain TCP)' : ' (TLS)'}`;
  return typeof s.url === 'string' ? s.url : '';
}
