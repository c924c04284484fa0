// The sandbox runtime: TextEncoder / TextDecoder.
/* global ErrorCtor, G, RangeErrorCtor, StringCtor, TypeErrorCtor, U8, WeakMapCtor, WeakMapGet, WeakMapSet, asBytes,
   base64Decode, base64Encode, define, latin1Decode, latin1Encode, lazy, lazyGlobal, utf16leDecode, utf8Decode,
   utf8Encode, utf8IncompleteTail */
/* exported getTextDecoder, getTextEncoder */
const getTextEncoder = lazy(function () {
  class TextEncoder {
    get encoding() {
      return 'utf-8';
    }
    encode(input) {
      return utf8Encode(input === undefined ? '' : input);
    }
    encodeInto(source, destination) {
      const bytes = utf8Encode(source);
      let written = 0,
        read = 0;
      const s = StringCtor(source);
      // Only whole code points are written, as the spec requires.
      for (let i = 0; i < s.length; i++) {
        const c = s.charCodeAt(i);
        const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
        const size = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
        if (written + size > destination.length) break;
        for (let k = 0; k < size; k++) destination[written + k] = bytes[written + k];
        written += size;
        read += pair ? 2 : 1;
        if (pair) i++;
      }
      return { read: read, written: written };
    }
  }
  return TextEncoder;
});
const DECODER_LABELS = {
  'utf-8': 'utf-8',
  utf8: 'utf-8',
  'unicode-1-1-utf-8': 'utf-8',
  'utf-16le': 'utf-16le',
  'utf-16': 'utf-16le',
  latin1: 'windows-1252',
  'iso-8859-1': 'windows-1252',
  'windows-1252': 'windows-1252',
  ascii: 'windows-1252',
  'us-ascii': 'windows-1252',
};
const decoderState = new WeakMapCtor();
const getTextDecoder = lazy(function () {
  class TextDecoder {
    constructor(label, options) {
      const key = label === undefined ? 'utf-8' : StringCtor(label).trim().toLowerCase();
      const encoding = DECODER_LABELS[key];
      if (!encoding) throw new RangeErrorCtor('The "' + label + '" encoding is not supported');
      const o = options || {};
      WeakMapSet(decoderState, this, { encoding: encoding, fatal: !!o.fatal, ignoreBOM: !!o.ignoreBOM, pending: null, started: false });
    }
    get encoding() {
      return WeakMapGet(decoderState, this).encoding;
    }
    get fatal() {
      return WeakMapGet(decoderState, this).fatal;
    }
    get ignoreBOM() {
      return WeakMapGet(decoderState, this).ignoreBOM;
    }
    decode(input, options) {
      const st = WeakMapGet(decoderState, this);
      let bytes = input === undefined ? new U8(0) : asBytes(input);
      if (!bytes) throw new TypeErrorCtor('The "input" argument must be an instance of ArrayBuffer or ArrayBufferView.');
      const stream = !!(options && options.stream);
      if (st.pending) {
        const joined = new U8(st.pending.length + bytes.length);
        joined.set(st.pending);
        joined.set(bytes, st.pending.length);
        bytes = joined;
        st.pending = null;
      }
      let end = bytes.length;
      if (stream && st.encoding === 'utf-8') end -= utf8IncompleteTail(bytes);
      if (stream && st.encoding === 'utf-16le') end -= end & 1;
      if (end < bytes.length) st.pending = bytes.slice(end);
      let start = 0;
      if (!st.started && !st.ignoreBOM) {
        if (st.encoding === 'utf-8' && end >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3;
        if (st.encoding === 'utf-16le' && end >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) start = 2;
      }
      if (end > 0) st.started = true;
      if (!stream) st.started = false;
      if (st.encoding === 'utf-8') return utf8Decode(bytes, start, end, st.fatal);
      if (st.encoding === 'utf-16le') return utf16leDecode(bytes, start, end);
      return latin1Decode(bytes, start, end, 0xff);
    }
  }
  return TextDecoder;
});
lazyGlobal('TextEncoder', getTextEncoder);
lazyGlobal('TextDecoder', getTextDecoder);

// ---------------------------------------------------------------- atob / btoa
function invalidCharacter(message) {
  const e = new ErrorCtor(message);
  define(e, 'name', 'InvalidCharacterError');
  return e;
}
define(G, 'btoa', function btoa(data) {
  if (arguments.length === 0) throw new TypeErrorCtor('The "data" argument must be specified');
  const s = StringCtor(data);
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0xff) throw invalidCharacter('Invalid character');
  const bytes = latin1Encode(s);
  return base64Encode(bytes, 0, bytes.length, false);
});
define(G, 'atob', function atob(data) {
  if (arguments.length === 0) throw new TypeErrorCtor('The "data" argument must be specified');
  let s = StringCtor(data).replace(/[\t\n\f\r ]/g, '');
  if (s.length % 4 === 0) s = s.replace(/==?$/, '');
  if (s.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(s)) throw invalidCharacter('The string to be decoded is not correctly encoded.');
  const bytes = base64Decode(s);
  return latin1Decode(bytes, 0, bytes.length, 0xff);
});
