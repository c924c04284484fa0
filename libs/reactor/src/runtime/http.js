// The sandbox runtime: outbound HTTP, the transport and the request options of require('http') / require('https') and
// fetch. Requests go to the sandbox process (host op 'http'), which makes them under the destination policy and the
// invocation's limits (src/outbound-http.ts); the response comes back whole through `deliver`. fetch (fetch.js) sends
// through `sendHttp`; the response object is http-incoming.js's, the modules themselves (Agent, ClientRequest) are
// http-client.js's.
/* global ArrayIsArray, ErrorCtor, JSONParse, JSONStringify, MapDelete, MapSet, ObjectKeys, StringCtor, TypeErrorCtor, U8,
   asBytes, base64Encode, bytesForHost, define, encodeString, host, nextPendingId:writable, pending, utf8Decode, utf8Encode */
/* exported STATUS_CODES, abortHttp, abortError, basicCredentials, callHostUrl, encodeChunk, joinBody, outboundError,
   requestOptions, sendHttp, tlsOptions */

// Sends one request; `done(error, head, bytes)` runs once. Returns the id to abort it with (host op 'httpAbort').
function sendHttp(request, body, done) {
  const id = nextPendingId++;
  MapSet(pending, id, function (payload, bytes) {
    const head = JSONParse(payload);
    if (head.error !== undefined) done(outboundError(head.error, head.code), null, null);
    else done(null, head, bytes === undefined ? new ArrayBuffer(0) : bytes);
  });
  const started = host('http', id, JSONStringify(request), body);
  if (started[0] !== true) {
    MapDelete(pending, id);
    throw outboundError(started[1], 'ERR_GATEHOUSE_OUTBOUND');
  }
  return id;
}
function outboundError(message, code) {
  const e = new ErrorCtor(StringCtor(message));
  if (code !== undefined) define(e, 'code', code);
  return e;
}
function abortHttp(id) {
  if (id !== null) host('httpAbort', id);
}

// Host and TLS options of a request, as Node reads them from options and its agent.
const TLS_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'servername', 'rejectUnauthorized', 'minVersion', 'maxVersion', 'ciphers'];
function pemText(value) {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (ArrayIsArray(value)) return value.map(pemText);
  const b = asBytes(value);
  return b === null ? StringCtor(value) : utf8Decode(b, 0, b.length, false);
}
function tlsOptions(options) {
  const tls = {};
  const agentOptions = options.agent && typeof options.agent === 'object' && options.agent.options ? options.agent.options : {};
  for (const key of TLS_KEYS) {
    const value = options[key] !== undefined ? options[key] : agentOptions[key];
    if (value !== undefined) tls[key] = key === 'rejectUnauthorized' ? value !== false : pemText(value);
  }
  return tls;
}

function abortError() {
  const e = new ErrorCtor('The operation was aborted');
  define(e, 'name', 'AbortError');
  define(e, 'code', 'ABORT_ERR');
  return e;
}
function encodeChunk(text, encoding) {
  return encoding === undefined ? utf8Encode(text) : encodeString(text, encoding);
}
function joinBody(chunks) {
  if (chunks.length === 0) return undefined;
  let total = 0;
  const parts = [];
  for (const c of chunks) {
    const b = asBytes(c);
    if (b === null) throw new TypeErrorCtor('The "chunk" argument must be of type string or an instance of Buffer or Uint8Array');
    parts.push(b);
    total += b.length;
  }
  const out = new U8(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return bytesForHost(out);
}

// http.request(url[, options][, callback]) / http.request(options[, callback]): one options object.
function requestOptions(input, options, protocol, defaultPort) {
  let o = {};
  if (typeof input === 'string' || (input !== null && typeof input === 'object' && typeof input.href === 'string' && typeof input.searchParams === 'object')) {
    const url = typeof input === 'string' ? callHostUrl(input) : input;
    o = { protocol: url.protocol, hostname: url.hostname, port: url.port, path: url.pathname + url.search };
    if (url.username !== '' || url.password !== '') o.auth = decodeURIComponent(url.username) + ':' + decodeURIComponent(url.password);
    if (options !== null && typeof options === 'object') for (const key of ObjectKeys(options)) o[key] = options[key];
  } else if (input !== null && typeof input === 'object') {
    for (const key of ObjectKeys(input)) o[key] = input[key];
  }
  const expected = o.agent && typeof o.agent === 'object' && o.agent.protocol ? o.agent.protocol : protocol;
  o.protocol = o.protocol || expected;
  if (o.protocol !== protocol) throw new TypeErrorCtor('Protocol "' + o.protocol + '" not supported. Expected "' + protocol + '"');
  let hostname = o.hostname || o.host || 'localhost';
  if (!o.hostname && typeof o.host === 'string' && o.host[0] !== '[' && o.host.indexOf(':') !== -1 && o.host.indexOf(':') === o.host.lastIndexOf(':'))
    hostname = o.host.split(':')[0];
  if (hostname[0] === '[') hostname = hostname.slice(1, -1);
  o.hostname = hostname;
  o.port = o.port === undefined || o.port === null || o.port === '' ? o.defaultPort || defaultPort : +o.port;
  o.path = o.path === undefined || o.path === null ? '/' : StringCtor(o.path);
  if (/[\u0000-\u0020]/.test(o.path)) throw new TypeErrorCtor('Request path contains unescaped characters');
  return o;
}
function callHostUrl(text) {
  const r = host('url', StringCtor(text));
  if (r[0] !== true) {
    const e = new TypeErrorCtor('Invalid URL');
    define(e, 'code', 'ERR_INVALID_URL');
    throw e;
  }
  return r[1];
}

const STATUS_CODES = {
  100: 'Continue',
  101: 'Switching Protocols',
  102: 'Processing',
  103: 'Early Hints',
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  203: 'Non-Authoritative Information',
  204: 'No Content',
  205: 'Reset Content',
  206: 'Partial Content',
  207: 'Multi-Status',
  208: 'Already Reported',
  226: 'IM Used',
  300: 'Multiple Choices',
  301: 'Moved Permanently',
  302: 'Found',
  303: 'See Other',
  304: 'Not Modified',
  305: 'Use Proxy',
  307: 'Temporary Redirect',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  407: 'Proxy Authentication Required',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  411: 'Length Required',
  412: 'Precondition Failed',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  416: 'Range Not Satisfiable',
  417: 'Expectation Failed',
  418: "I'm a Teapot",
  421: 'Misdirected Request',
  422: 'Unprocessable Entity',
  423: 'Locked',
  424: 'Failed Dependency',
  425: 'Too Early',
  426: 'Upgrade Required',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  451: 'Unavailable For Legal Reasons',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  505: 'HTTP Version Not Supported',
  506: 'Variant Also Negotiates',
  507: 'Insufficient Storage',
  508: 'Loop Detected',
  509: 'Bandwidth Limit Exceeded',
  510: 'Not Extended',
  511: 'Network Authentication Required',
};

function basicCredentials(auth) {
  const bytes = utf8Encode(StringCtor(auth));
  return base64Encode(bytes, 0, bytes.length, false);
}
