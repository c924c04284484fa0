// The sandbox runtime: byte encodings.
/* global MathMin, StringCtor, StringFromCharCode, TypeErrorCtor, U8 */
/* exported ENCODINGS, HEX, asBytes, joinBytes, base64Decode, base64Encode, bytesForHost, decodeBytes, encodeString, hexEncode, normalizeEncoding,
   hexValue, latin1Decode, latin1Encode, utf16leDecode, utf8Decode, utf8Encode, utf8IncompleteTail */
function utf8Encode(str) {
  const s = StringCtor(str);
  const n = s.length;
  let size = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) size += 1;
    else if (c < 0x800) size += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      size += 4;
      i++;
    } else size += 3;
  }
  const out = new U8(size);
  let p = 0;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      out[p++] = c;
      continue;
    }
    if (c < 0x800) {
      out[p++] = 0xc0 | (c >> 6);
      out[p++] = 0x80 | (c & 63);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      if (c <= 0xdbff && i + 1 < n && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
        c = 0x10000 + ((c - 0xd800) << 10) + (s.charCodeAt(++i) - 0xdc00);
        out[p++] = 0xf0 | (c >> 18);
        out[p++] = 0x80 | ((c >> 12) & 63);
        out[p++] = 0x80 | ((c >> 6) & 63);
        out[p++] = 0x80 | (c & 63);
        continue;
      }
      c = 0xfffd;
    }
    out[p++] = 0xe0 | (c >> 12);
    out[p++] = 0x80 | ((c >> 6) & 63);
    out[p++] = 0x80 | (c & 63);
  }
  return out;
}

function codeUnitsToString(units, length) {
  let s = '';
  for (let i = 0; i < length; i += 8192) {
    s += StringFromCharCode.apply(null, units.subarray(i, MathMin(length, i + 8192)));
  }
  return s;
}

// WHATWG UTF-8 decode: each maximal invalid subpart becomes one U+FFFD (or a TypeError if fatal).
function utf8Decode(bytes, start, end, fatal) {
  const units = new Uint16Array(end - start);
  let n = 0;
  let i = start;
  while (i < end) {
    const b = bytes[i];
    if (b < 0x80) {
      units[n++] = b;
      i++;
      continue;
    }
    let need = 0,
      cp = 0,
      lower = 0x80,
      upper = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      cp = b & 0x1f;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      cp = b & 0xf;
      if (b === 0xe0) lower = 0xa0;
      if (b === 0xed) upper = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      cp = b & 7;
      if (b === 0xf0) lower = 0x90;
      if (b === 0xf4) upper = 0x8f;
    } else {
      if (fatal) throw new TypeErrorCtor('The encoded data was not valid for encoding utf-8');
      units[n++] = 0xfffd;
      i++;
      continue;
    }
    let j = i + 1,
      ok = true;
    for (let k = 0; k < need; k++, j++) {
      const c = j < end ? bytes[j] : -1;
      if (c < lower || c > upper) {
        ok = false;
        break;
      }
      lower = 0x80;
      upper = 0xbf;
      cp = (cp << 6) | (c & 63);
    }
    if (!ok) {
      if (fatal) throw new TypeErrorCtor('The encoded data was not valid for encoding utf-8');
      units[n++] = 0xfffd;
      i = j;
      continue;
    }
    if (cp >= 0x10000) {
      cp -= 0x10000;
      units[n++] = 0xd800 + (cp >> 10);
      units[n++] = 0xdc00 + (cp & 0x3ff);
    } else {
      units[n++] = cp;
    }
    i = j;
  }
  return codeUnitsToString(units, n);
}

// Length of a trailing incomplete (but so far valid) UTF-8 sequence, kept back when streaming.
function utf8IncompleteTail(bytes) {
  const n = bytes.length;
  for (let back = 1; back <= MathMin(3, n); back++) {
    const b = bytes[n - back];
    if ((b & 0xc0) === 0x80) continue;
    const need = b >= 0xf0 && b <= 0xf4 ? 4 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xc2 && b <= 0xdf ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

function latin1Encode(str) {
  const s = StringCtor(str);
  const out = new U8(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i) & 0xff;
  return out;
}
function latin1Decode(bytes, start, end, mask) {
  const units = new Uint16Array(end - start);
  for (let i = start; i < end; i++) units[i - start] = bytes[i] & mask;
  return codeUnitsToString(units, end - start);
}
function utf16leEncode(str) {
  const s = StringCtor(str);
  const out = new U8(s.length * 2);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    out[2 * i] = c & 0xff;
    out[2 * i + 1] = c >> 8;
  }
  return out;
}
function utf16leDecode(bytes, start, end) {
  const len = (end - start) >> 1;
  const units = new Uint16Array(len);
  for (let i = 0; i < len; i++) units[i] = bytes[start + 2 * i] | (bytes[start + 2 * i + 1] << 8);
  return codeUnitsToString(units, len);
}

const HEX = '0123456789abcdef';
function hexEncode(bytes, start, end) {
  let s = '';
  for (let i = start; i < end; i++) s += HEX[bytes[i] >> 4] + HEX[bytes[i] & 15];
  return s;
}
function hexValue(c) {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}
function hexDecode(str) {
  const s = StringCtor(str);
  const out = new U8(s.length >> 1);
  let n = 0;
  for (let i = 0; i + 1 < s.length; i += 2) {
    const hi = hexValue(s.charCodeAt(i)),
      lo = hexValue(s.charCodeAt(i + 1));
    if (hi < 0 || lo < 0) break;
    out[n++] = (hi << 4) | lo;
  }
  return out.subarray(0, n);
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const B64_LOOKUP = new Int16Array(128).fill(-1);
for (let i = 0; i < 64; i++) {
  B64_LOOKUP[B64.charCodeAt(i)] = i;
  B64_LOOKUP[B64URL.charCodeAt(i)] = i;
}
function base64Encode(bytes, start, end, url) {
  const table = url ? B64URL : B64;
  let s = '';
  let i = start;
  for (; i + 2 < end; i += 3) {
    const v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    s += table[v >> 18] + table[(v >> 12) & 63] + table[(v >> 6) & 63] + table[v & 63];
  }
  const rest = end - i;
  if (rest === 1) {
    const v = bytes[i] << 16;
    s += table[v >> 18] + table[(v >> 12) & 63] + (url ? '' : '==');
  } else if (rest === 2) {
    const v = (bytes[i] << 16) | (bytes[i + 1] << 8);
    s += table[v >> 18] + table[(v >> 12) & 63] + table[(v >> 6) & 63] + (url ? '' : '=');
  }
  return s;
}
// Node's lenient decoder: skips characters outside the alphabet, stops at the first '='.
function base64Decode(str) {
  const s = StringCtor(str);
  const out = new U8(((s.length + 3) >> 2) * 3);
  let n = 0,
    acc = 0,
    bits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 61) break;
    const v = c < 128 ? B64_LOOKUP[c] : -1;
    if (v < 0) continue;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[n++] = (acc >> bits) & 0xff;
    }
  }
  return out.subarray(0, n);
}

const ENCODINGS = {
  utf8: 'utf8',
  'utf-8': 'utf8',
  hex: 'hex',
  base64: 'base64',
  base64url: 'base64url',
  latin1: 'latin1',
  binary: 'latin1',
  ascii: 'ascii',
  utf16le: 'utf16le',
  'utf-16le': 'utf16le',
  ucs2: 'utf16le',
  'ucs-2': 'utf16le',
};
function normalizeEncoding(enc) {
  if (enc === undefined || enc === null || enc === '') return 'utf8';
  const e = ENCODINGS[StringCtor(enc).toLowerCase()];
  if (!e) throw new TypeErrorCtor('Unknown encoding: ' + enc);
  return e;
}
function encodeString(str, enc) {
  switch (normalizeEncoding(enc)) {
    case 'utf8':
      return utf8Encode(str);
    case 'hex':
      return hexDecode(str);
    case 'base64':
    case 'base64url':
      return base64Decode(str);
    case 'latin1':
    case 'ascii':
      return latin1Encode(str);
    case 'utf16le':
      return utf16leEncode(str);
  }
}
function decodeBytes(bytes, enc, start, end) {
  switch (normalizeEncoding(enc)) {
    case 'utf8':
      return utf8Decode(bytes, start, end, false);
    case 'hex':
      return hexEncode(bytes, start, end);
    case 'base64':
      return base64Encode(bytes, start, end, false);
    case 'base64url':
      return base64Encode(bytes, start, end, true);
    case 'latin1':
      return latin1Decode(bytes, start, end, 0xff);
    case 'ascii':
      return latin1Decode(bytes, start, end, 0x7f);
    case 'utf16le':
      return utf16leDecode(bytes, start, end);
  }
}

// Any binary-ish input as a Uint8Array view over the same memory.
function asBytes(value) {
  if (value instanceof U8) return value;
  if (value instanceof ArrayBuffer) return new U8(value);
  if (ArrayBuffer.isView(value)) return new U8(value.buffer, value.byteOffset, value.byteLength);
  return null;
}
// Byte arrays end to end in one new Uint8Array.
function joinBytes(chunks) {
  let total = 0;
  for (const c of chunks) total += c.length;
  const joined = new U8(total);
  let at = 0;
  for (const c of chunks) {
    joined.set(c, at);
    at += c.length;
  }
  return joined;
}
// An exact-size copy, so the host never receives a larger underlying ArrayBuffer than was meant.
function bytesForHost(view) {
  const copy = new U8(view.byteLength);
  copy.set(view);
  return copy;
}
