// The sandbox runtime: Buffer (Node-like subset).
/* global ArrayIsArray, ENCODINGS, MathFloor, MathMax, MathMin, NumberIsInteger, ObjectDefineProperty, ObjectSetPrototypeOf,
   RangeErrorCtor, TypeErrorCtor, U8,
   asBytes, decodeBytes, define, encodeString, lazy, lazyGlobal, limits */
/* exported BufferClass, checkSize, getBuffer, toBuffer */
function clampIndex(v, dflt, len) {
  if (v === undefined) return dflt;
  let n = MathFloor(+v);
  if (n !== n) n = 0;
  if (n < 0) n = MathMax(0, len + n);
  return MathMin(n, len);
}

let BufferClass = null;
// The class behind Buffer (what the runtime makes its buffers with, without Buffer's argument checks).
let FastBufferClass = null;
const getBuffer = lazy(function makeBuffer() {
  class Buffer extends U8 {
    static from(value, encodingOrOffset, length) {
      if (typeof value === 'string') return toBuffer(encodeString(value, encodingOrOffset));
      if (value instanceof ArrayBuffer) {
        const offset = encodingOrOffset === undefined ? 0 : encodingOrOffset >>> 0;
        const len = length === undefined ? value.byteLength - offset : length >>> 0;
        return new Buffer(value, offset, len);
      }
      if (value instanceof U8) {
        const b = new Buffer(value.length);
        b.set(value);
        return b;
      }
      if (value !== null && typeof value === 'object') {
        if (value.type === 'Buffer' && ArrayIsArray(value.data)) return Buffer.from(value.data);
        if (typeof value.length === 'number' || ArrayBuffer.isView(value)) {
          const len = value.length >>> 0;
          const b = new Buffer(len);
          for (let i = 0; i < len; i++) b[i] = value[i] & 0xff;
          return b;
        }
        if (typeof value.valueOf === 'function') {
          const prim = value.valueOf();
          if (prim !== value && (typeof prim === 'string' || typeof prim === 'object')) return Buffer.from(prim, encodingOrOffset, length);
        }
      }
      throw new TypeErrorCtor('The first argument must be of type string or an instance of Buffer, ArrayBuffer, or Array or an Array-like Object.');
    }
    static alloc(size, fill, encoding) {
      const b = new Buffer(checkSize(size));
      if (fill !== undefined && fill !== 0) b.fill(fill, 0, b.length, encoding);
      return b;
    }
    static allocUnsafe(size) {
      return new Buffer(checkSize(size));
    }
    static allocUnsafeSlow(size) {
      return new Buffer(checkSize(size));
    }
    static isBuffer(obj) {
      return obj instanceof Buffer;
    }
    static isEncoding(enc) {
      return typeof enc === 'string' && ENCODINGS[enc.toLowerCase()] !== undefined;
    }
    static byteLength(value, encoding) {
      if (typeof value === 'string') return encodeString(value, encoding).length;
      const bytes = asBytes(value);
      if (bytes) return bytes.byteLength;
      throw new TypeErrorCtor('The "string" argument must be of type string or an instance of Buffer or ArrayBuffer.');
    }
    static concat(list, totalLength) {
      if (!ArrayIsArray(list)) throw new TypeErrorCtor('The "list" argument must be an instance of Array.');
      let total = 0;
      for (const item of list) {
        const bytes = asBytes(item);
        if (!bytes) throw new TypeErrorCtor('The "list" argument must contain only Buffer or Uint8Array instances.');
        total += bytes.length;
      }
      if (totalLength !== undefined) total = checkSize(totalLength);
      const out = new Buffer(total);
      let p = 0;
      for (const item of list) {
        if (p >= total) break;
        const bytes = asBytes(item);
        const n = MathMin(bytes.length, total - p);
        out.set(n === bytes.length ? bytes : bytes.subarray(0, n), p);
        p += n;
      }
      return out;
    }
    static compare(a, b) {
      return compareBytes(asBytes(a), asBytes(b));
    }

    toString(encoding, start, end) {
      const s = clampIndex(start, 0, this.length);
      const e = clampIndex(end, this.length, this.length);
      return e <= s ? '' : decodeBytes(this, encoding, s, e);
    }
    toJSON() {
      return { type: 'Buffer', data: Array.from(this) };
    }
    equals(other) {
      const b = asBytes(other);
      if (!b) throw new TypeErrorCtor('The "otherBuffer" argument must be an instance of Buffer or Uint8Array.');
      return compareBytes(this, b) === 0;
    }
    compare(other) {
      return compareBytes(this, asBytes(other));
    }
    slice(start, end) {
      return this.subarray(start, end);
    }
    copy(target, targetStart, sourceStart, sourceEnd) {
      const t = asBytes(target);
      const ts = targetStart === undefined ? 0 : targetStart >>> 0;
      const ss = sourceStart === undefined ? 0 : sourceStart >>> 0;
      const se = sourceEnd === undefined ? this.length : MathMin(sourceEnd >>> 0, this.length);
      if (ts >= t.length || ss >= se) return 0;
      const n = MathMin(se - ss, t.length - ts);
      t.set(this.subarray(ss, ss + n), ts);
      return n;
    }
    write(string, offset, length, encoding) {
      if (typeof offset === 'string') {
        encoding = offset;
        offset = 0;
        length = undefined;
      } else if (typeof length === 'string') {
        encoding = length;
        length = undefined;
      }
      const o = offset === undefined ? 0 : offset >>> 0;
      const bytes = encodeString(string, encoding);
      const n = MathMin(bytes.length, this.length - o, length === undefined ? Infinity : length >>> 0);
      if (n > 0) this.set(bytes.subarray(0, n), o);
      return MathMax(0, n);
    }
    fill(value, offset, end, encoding) {
      if (typeof offset === 'string') {
        encoding = offset;
        offset = 0;
        end = this.length;
      } else if (typeof end === 'string') {
        encoding = end;
        end = this.length;
      }
      const s = offset === undefined ? 0 : MathMin(offset >>> 0, this.length);
      const e = end === undefined ? this.length : MathMin(end >>> 0, this.length);
      if (typeof value === 'number') {
        U8.prototype.fill.call(this, value & 0xff, s, e);
        return this;
      }
      const bytes = typeof value === 'string' ? encodeString(value, encoding) : asBytes(value);
      if (!bytes || bytes.length === 0) {
        U8.prototype.fill.call(this, 0, s, e);
        return this;
      }
      for (let i = s, j = 0; i < e; i++, j = (j + 1) % bytes.length) this[i] = bytes[j];
      return this;
    }
    indexOf(value, byteOffset, encoding) {
      if (typeof value === 'number') return U8.prototype.indexOf.call(this, value & 0xff, byteOffset);
      const needle = typeof value === 'string' ? encodeString(value, encoding) : asBytes(value);
      if (!needle) throw new TypeErrorCtor('The "value" argument must be one of type number, string, Buffer or Uint8Array.');
      const from = clampIndex(byteOffset, 0, this.length);
      outer: for (let i = from; i + needle.length <= this.length; i++) {
        for (let j = 0; j < needle.length; j++) if (this[i + j] !== needle[j]) continue outer;
        return i;
      }
      return -1;
    }
    includes(value, byteOffset, encoding) {
      return this.indexOf(value, byteOffset, encoding) !== -1;
    }
  }

  // Fixed-width integer readers and writers: readUInt16BE, writeInt32LE, and so on.
  const INT_ACCESSORS = [
    ['UInt8', 1, 'Uint8'],
    ['Int8', 1, 'Int8'],
    ['UInt16', 2, 'Uint16'],
    ['Int16', 2, 'Int16'],
    ['UInt32', 4, 'Uint32'],
    ['Int32', 4, 'Int32'],
    ['Float', 4, 'Float32'],
    ['Double', 8, 'Float64'],
    ['BigUInt64', 8, 'BigUint64'],
    ['BigInt64', 8, 'BigInt64'],
  ];
  for (const spec of INT_ACCESSORS) {
    const name = spec[0],
      size = spec[1],
      dv = spec[2];
    const ends = size === 1 ? [''] : ['BE', 'LE'];
    for (const endian of ends) {
      const little = endian === 'LE';
      const read = function (offset) {
        const o = offset === undefined ? 0 : offset;
        if (!NumberIsInteger(o) || o < 0 || o + size > this.length) throw new RangeErrorCtor('The value of "offset" is out of range.');
        return new DataView(this.buffer, this.byteOffset, this.byteLength)['get' + dv](o, little);
      };
      const write = function (value, offset) {
        const o = offset === undefined ? 0 : offset;
        if (!NumberIsInteger(o) || o < 0 || o + size > this.length) throw new RangeErrorCtor('The value of "offset" is out of range.');
        new DataView(this.buffer, this.byteOffset, this.byteLength)['set' + dv](o, value, little);
        return o + size;
      };
      define(Buffer.prototype, 'read' + name + endian, read);
      define(Buffer.prototype, 'write' + name + endian, write);
      if (name[0] === 'U' || (name[0] === 'B' && name[3] === 'U')) {
        const alias = name.replace('UInt', 'Uint');
        define(Buffer.prototype, 'read' + alias + endian, read);
        define(Buffer.prototype, 'write' + alias + endian, write);
      }
    }
  }
  // Variable-width integers (1 to 6 bytes), lastIndexOf and the byte swaps.
  function checkWidth(buf, offset, width) {
    if (!NumberIsInteger(width) || width < 1 || width > 6) throw new RangeErrorCtor('The value of "byteLength" is out of range.');
    if (!NumberIsInteger(offset) || offset < 0 || offset + width > buf.length) throw new RangeErrorCtor('The value of "offset" is out of range.');
  }
  function readUInt(buf, offset, width, little) {
    checkWidth(buf, offset, width);
    let v = 0;
    for (let i = 0; i < width; i++) v = v * 256 + buf[offset + (little ? width - 1 - i : i)];
    return v;
  }
  function writeUInt(buf, value, offset, width, little) {
    checkWidth(buf, offset, width);
    let v = +value;
    if (v < 0) v += 2 ** (8 * width);
    for (let i = 0; i < width; i++) {
      buf[offset + (little ? i : width - 1 - i)] = v % 256;
      v = MathFloor(v / 256);
    }
    return offset + width;
  }
  const widthMethods = {
    readUIntBE: function (offset, width) {
      return readUInt(this, offset, width, false);
    },
    readUIntLE: function (offset, width) {
      return readUInt(this, offset, width, true);
    },
    readIntBE: function (offset, width) {
      const v = readUInt(this, offset, width, false);
      return v >= 2 ** (8 * width - 1) ? v - 2 ** (8 * width) : v;
    },
    readIntLE: function (offset, width) {
      const v = readUInt(this, offset, width, true);
      return v >= 2 ** (8 * width - 1) ? v - 2 ** (8 * width) : v;
    },
    writeUIntBE: function (value, offset, width) {
      return writeUInt(this, value, offset, width, false);
    },
    writeUIntLE: function (value, offset, width) {
      return writeUInt(this, value, offset, width, true);
    },
    writeIntBE: function (value, offset, width) {
      return writeUInt(this, value, offset, width, false);
    },
    writeIntLE: function (value, offset, width) {
      return writeUInt(this, value, offset, width, true);
    },
    lastIndexOf: function (value, byteOffset, encoding) {
      if (typeof value === 'number') return U8.prototype.lastIndexOf.call(this, value & 0xff, byteOffset === undefined ? this.length - 1 : byteOffset);
      const needle = typeof value === 'string' ? encodeString(value, encoding) : asBytes(value);
      if (!needle) throw new TypeErrorCtor('The "value" argument must be one of type number, string, Buffer or Uint8Array.');
      const from = byteOffset === undefined ? this.length - needle.length : MathMin(clampIndex(byteOffset, 0, this.length), this.length - needle.length);
      outer: for (let i = from; i >= 0; i--) {
        for (let j = 0; j < needle.length; j++) if (this[i + j] !== needle[j]) continue outer;
        return i;
      }
      return -1;
    },
  };
  for (const name of ['readUIntBE', 'readUIntLE', 'readIntBE', 'readIntLE', 'writeUIntBE', 'writeUIntLE', 'writeIntBE', 'writeIntLE', 'lastIndexOf']) {
    define(Buffer.prototype, name, widthMethods[name]);
  }
  for (const size of [2, 4, 8]) {
    define(Buffer.prototype, 'swap' + size * 8, function () {
      if (this.length % size !== 0) throw new RangeErrorCtor('Buffer size must be a multiple of ' + size * 8 + '-bits');
      for (let i = 0; i < this.length; i += size) {
        for (let a = i, b = i + size - 1; a < b; a++, b--) {
          const t = this[a];
          this[a] = this[b];
          this[b] = t;
        }
      }
      return this;
    });
  }
  // Node's Buffer.from and friends are ordinary functions (`new Buffer.from(x)` works there, and transforms do it):
  // class methods are not constructors, so each becomes one that answers what the method answers.
  for (const name of ['from', 'alloc', 'allocUnsafe', 'allocUnsafeSlow', 'isBuffer', 'isEncoding', 'byteLength', 'concat', 'compare']) {
    const method = Buffer[name];
    define(
      Buffer,
      name,
      {
        [name]: function () {
          return method.apply(Buffer, arguments);
        },
      }[name],
    );
  }
  // Node's Buffer is a function (`Buffer(x)` without `new` works, deprecated) over the class that holds the methods:
  // `new Buffer(x)` and `Buffer(x)` answer what Buffer.alloc(n) or Buffer.from(x) do, and both share the prototype, so
  // `instanceof Buffer` and `.constructor === Buffer` hold for every buffer.
  const FastBuffer = Buffer;
  const PublicBuffer = {
    Buffer: function (arg, encodingOrOffset, length) {
      if (typeof arg === 'number') {
        if (typeof encodingOrOffset === 'string') {
          const e = new TypeErrorCtor('The "string" argument must be of type string. Received type number (' + arg + ')');
          define(e, 'code', 'ERR_INVALID_ARG_TYPE');
          throw e;
        }
        return FastBuffer.alloc(arg);
      }
      return FastBuffer.from(arg, encodingOrOffset, length);
    },
  }.Buffer;
  ObjectSetPrototypeOf(PublicBuffer, U8);
  PublicBuffer.prototype = FastBuffer.prototype;
  define(FastBuffer.prototype, 'constructor', PublicBuffer);
  // Typed-array methods that make a new array (subarray, map, filter) build it with the class itself.
  ObjectDefineProperty(PublicBuffer, Symbol.species, {
    configurable: true,
    get: function () {
      return FastBuffer;
    },
  });
  for (const name of ['from', 'alloc', 'allocUnsafe', 'allocUnsafeSlow', 'isBuffer', 'isEncoding', 'byteLength', 'concat', 'compare']) {
    define(PublicBuffer, name, FastBuffer[name]);
  }
  define(PublicBuffer, 'poolSize', 8192);
  FastBufferClass = FastBuffer;
  BufferClass = PublicBuffer;
  return PublicBuffer;
});

function checkSize(size) {
  if (typeof size !== 'number' || !(size >= 0) || size > limits.maxBufferLength || size !== size) {
    throw new RangeErrorCtor('The value of "size" is out of range.');
  }
  return MathFloor(size);
}
function toBuffer(bytes) {
  getBuffer();
  return new FastBufferClass(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
function compareBytes(a, b) {
  if (!a || !b) throw new TypeErrorCtor('The arguments must be Buffer or Uint8Array instances.');
  const n = MathMin(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
lazyGlobal('Buffer', getBuffer);
