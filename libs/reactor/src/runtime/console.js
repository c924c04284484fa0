// The sandbox runtime: console (captured, capped).
/* global BufferClass, ErrorCtor, G, JSONStringify, MapCtor, MathMin, ObjectPrototypeToString, StringCtor,
   StringSlice, define, describe, hexEncode, host, limits */
/* exported resetLogLines */
let logLines = 0;
// A new run may log its own lines again.
function resetLogLines() {
  logLines = 0;
}
function formatValue(v, top) {
  switch (typeof v) {
    case 'string':
      return top ? v : JSONStringify(v);
    case 'number':
    case 'boolean':
    case 'undefined':
      return StringCtor(v);
    case 'bigint':
      return StringCtor(v) + 'n';
    case 'symbol':
      return v.toString();
    case 'function':
      return '[Function: ' + (v.name || '(anonymous)') + ']';
  }
  if (v === null) return 'null';
  if (v instanceof ErrorCtor) return typeof v.stack === 'string' ? v.stack : v.name + ': ' + v.message;
  if (BufferClass !== null && v instanceof BufferClass) {
    const shown = hexEncode(v, 0, MathMin(v.length, 50)).replace(/(..)(?!$)/g, '$1 ');
    return '<Buffer ' + shown + (v.length > 50 ? ' ... ' + (v.length - 50) + ' more bytes' : '') + '>';
  }
  const seen = [];
  const json = JSONStringify(v, function (key, value) {
    if (typeof value === 'bigint') return StringCtor(value) + 'n';
    if (typeof value === 'function') return '[Function: ' + (value.name || '(anonymous)') + ']';
    if (typeof value === 'undefined') return key === '' ? value : undefined;
    if (value !== null && typeof value === 'object') {
      if (value instanceof MapCtor) return { '[Map]': Array.from(value.entries()) };
      if (value instanceof Set) return { '[Set]': Array.from(value.values()) };
      if (seen.indexOf(value) !== -1) return '[Circular]';
      seen.push(value);
    }
    return value;
  });
  return json === undefined ? ObjectPrototypeToString(v) : json;
}
function formatArgs(args) {
  let i = 0;
  let out = '';
  if (typeof args[0] === 'string' && args[0].indexOf('%') !== -1 && args.length > 1) {
    i = 1;
    out = args[0].replace(/%[sdifjoOc%]/g, function (m) {
      if (m === '%%') return '%';
      if (i >= args.length) return m;
      const a = args[i++];
      switch (m) {
        case '%s':
          return typeof a === 'string' ? a : formatValue(a, true);
        case '%d':
        case '%i':
          return typeof a === 'bigint' ? a + 'n' : StringCtor(m === '%i' ? parseInt(a, 10) : +a);
        case '%f':
          return StringCtor(parseFloat(a));
        case '%c':
          return '';
        default:
          return formatValue(a, false);
      }
    });
  } else if (args.length > 0) {
    out = formatValue(args[0], true);
    i = 1;
  }
  for (; i < args.length; i++) out += ' ' + formatValue(args[i], true);
  return out;
}
function emit(level, args) {
  if (logLines >= limits.maxLogLines) return;
  logLines++;
  let line;
  try {
    line = formatArgs(args);
  } catch (e) {
    line = '[unprintable value: ' + describe(e) + ']';
  }
  if (line.length > limits.maxLogLineLength) line = StringSlice(line, 0, limits.maxLogLineLength);
  host('log', level, line);
}
const consoleObject = {
  log: function log() {
    emit('log', arguments);
  },
  info: function info() {
    emit('info', arguments);
  },
  warn: function warn() {
    emit('warn', arguments);
  },
  error: function error() {
    emit('error', arguments);
  },
  debug: function debug() {
    emit('debug', arguments);
  },
  trace: function trace() {
    emit('debug', arguments);
  },
  dir: function dir(v) {
    emit('log', [v]);
  },
  assert: function assert(condition) {
    if (!condition) emit('error', ['Assertion failed' + (arguments.length > 1 ? ':' : '')].concat(Array.prototype.slice.call(arguments, 1)));
  },
};
define(G, 'console', consoleObject);
