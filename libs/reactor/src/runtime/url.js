// The sandbox runtime: URLSearchParams / URL.
/* global HEX, ObjectKeys, StringCtor, StringFromCharCode, StringSlice, TypeErrorCtor, U8, WeakMapCtor, WeakMapGet,
   WeakMapSet, callHost, hexValue, host, lazy, lazyGlobal, utf8Decode, utf8Encode */
// application/x-www-form-urlencoded, as the URL standard defines it.
function percentDecodeToString(s) {
  const bytes = utf8Encode(s);
  const out = new U8(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === 0x25 && i + 2 < bytes.length) {
      const hi = hexValue(bytes[i + 1]),
        lo = hexValue(bytes[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out[n++] = (hi << 4) | lo;
        i += 2;
        continue;
      }
    }
    out[n++] = b;
  }
  return utf8Decode(out, 0, n, false);
}
function parseFormUrlencoded(input) {
  const list = [];
  for (const part of StringCtor(input).split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = eq === -1 ? part : StringSlice(part, 0, eq);
    const value = eq === -1 ? '' : StringSlice(part, eq + 1);
    list.push([percentDecodeToString(name.replace(/\+/g, ' ')), percentDecodeToString(value.replace(/\+/g, ' '))]);
  }
  return list;
}
function formEncode(s) {
  const bytes = utf8Encode(s);
  let out = '';
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === 0x20) out += '+';
    else if (b === 0x2a || b === 0x2d || b === 0x2e || b === 0x5f || (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a))
      out += StringFromCharCode(b);
    else out += '%' + HEX[b >> 4].toUpperCase() + HEX[b & 15].toUpperCase();
  }
  return out;
}
function serializeFormUrlencoded(list) {
  let out = '';
  for (let i = 0; i < list.length; i++) out += (i ? '&' : '') + formEncode(list[i][0]) + '=' + formEncode(list[i][1]);
  return out;
}

const getUrlClasses = lazy(function () {
  const paramsState = new WeakMapCtor();
  function paramsOf(self) {
    const st = WeakMapGet(paramsState, self);
    if (!st) throw new TypeErrorCtor('Value of "this" must be of type URLSearchParams');
    return st;
  }
  function paramsChanged(st) {
    if (st.url) setUrlPart(st.url, 'search', serializeFormUrlencoded(st.list), true);
  }
  class URLSearchParams {
    constructor(init) {
      const st = { list: [], url: null };
      WeakMapSet(paramsState, this, st);
      if (init === undefined || init === null) return;
      if (typeof init === 'object' || typeof init === 'function') {
        const other = WeakMapGet(paramsState, init);
        if (other) {
          st.list = other.list.map((p) => [p[0], p[1]]);
          return;
        }
        if (typeof init[Symbol.iterator] === 'function') {
          for (const pair of init) {
            const p = Array.from(pair);
            if (p.length !== 2) throw new TypeErrorCtor('Each query pair must be an iterable [name, value] tuple');
            st.list.push([StringCtor(p[0]), StringCtor(p[1])]);
          }
        } else {
          for (const key of ObjectKeys(init)) st.list.push([key, StringCtor(init[key])]);
        }
        return;
      }
      let s = StringCtor(init);
      if (s[0] === '?') s = StringSlice(s, 1);
      st.list = parseFormUrlencoded(s);
    }
    get size() {
      return paramsOf(this).list.length;
    }
    append(name, value) {
      const st = paramsOf(this);
      st.list.push([StringCtor(name), StringCtor(value)]);
      paramsChanged(st);
    }
    delete(name, value) {
      const st = paramsOf(this);
      const n = StringCtor(name);
      st.list = st.list.filter((p) => !(p[0] === n && (value === undefined || p[1] === StringCtor(value))));
      paramsChanged(st);
    }
    get(name) {
      const n = StringCtor(name);
      const p = paramsOf(this).list.find((q) => q[0] === n);
      return p ? p[1] : null;
    }
    getAll(name) {
      const n = StringCtor(name);
      return paramsOf(this)
        .list.filter((q) => q[0] === n)
        .map((q) => q[1]);
    }
    has(name, value) {
      const n = StringCtor(name);
      return paramsOf(this).list.some((q) => q[0] === n && (value === undefined || q[1] === StringCtor(value)));
    }
    set(name, value) {
      const st = paramsOf(this);
      const n = StringCtor(name),
        v = StringCtor(value);
      const i = st.list.findIndex((q) => q[0] === n);
      if (i === -1) st.list.push([n, v]);
      else {
        st.list[i][1] = v;
        st.list = st.list.filter((q, j) => j <= i || q[0] !== n);
      }
      paramsChanged(st);
    }
    sort() {
      const st = paramsOf(this);
      st.list = st.list
        .map((p, i) => [p, i])
        .sort((a, b) => (a[0][0] < b[0][0] ? -1 : a[0][0] > b[0][0] ? 1 : a[1] - b[1]))
        .map((x) => x[0]);
      paramsChanged(st);
    }
    forEach(callback, thisArg) {
      const st = paramsOf(this);
      for (let i = 0; i < st.list.length; i++) callback.call(thisArg, st.list[i][1], st.list[i][0], this);
    }
    *entries() {
      const st = paramsOf(this);
      for (let i = 0; i < st.list.length; i++) yield [st.list[i][0], st.list[i][1]];
    }
    *keys() {
      for (const p of this.entries()) yield p[0];
    }
    *values() {
      for (const p of this.entries()) yield p[1];
    }
    [Symbol.iterator]() {
      return this.entries();
    }
    toString() {
      return serializeFormUrlencoded(paramsOf(this).list);
    }
    get [Symbol.toStringTag]() {
      return 'URLSearchParams';
    }
  }

  // Parsing and component setters go to the host's WHATWG URL implementation (exact Node semantics
  // without shipping a URL parser and its IDNA tables into every context).
  const urlState = new WeakMapCtor();
  function urlOf(self) {
    const st = WeakMapGet(urlState, self);
    if (!st) throw new TypeErrorCtor('Value of "this" must be of type URL');
    return st;
  }
  function setUrlPart(self, part, value, fromParams) {
    const st = urlOf(self);
    st.rec = callHost('urlSet', st.rec.href, part, StringCtor(value), undefined, TypeErrorCtor);
    if (!fromParams && st.params && (part === 'search' || part === 'href')) {
      WeakMapGet(paramsState, st.params).list = parseFormUrlencoded(StringSlice(st.rec.search, 1));
    }
  }
  class URL {
    constructor(url, base) {
      if (arguments.length === 0) throw new TypeErrorCtor('The "url" argument must be specified');
      const rec = callHost('url', StringCtor(url), base === undefined ? undefined : StringCtor(base), undefined, undefined, TypeErrorCtor);
      WeakMapSet(urlState, this, { rec: rec, params: null });
    }
    static canParse(url, base) {
      return host('url', StringCtor(url), base === undefined ? undefined : StringCtor(base))[0] === true;
    }
    get href() {
      return urlOf(this).rec.href;
    }
    set href(v) {
      setUrlPart(this, 'href', v, false);
    }
    get origin() {
      return urlOf(this).rec.origin;
    }
    get protocol() {
      return urlOf(this).rec.protocol;
    }
    set protocol(v) {
      setUrlPart(this, 'protocol', v, false);
    }
    get username() {
      return urlOf(this).rec.username;
    }
    set username(v) {
      setUrlPart(this, 'username', v, false);
    }
    get password() {
      return urlOf(this).rec.password;
    }
    set password(v) {
      setUrlPart(this, 'password', v, false);
    }
    get host() {
      return urlOf(this).rec.host;
    }
    set host(v) {
      setUrlPart(this, 'host', v, false);
    }
    get hostname() {
      return urlOf(this).rec.hostname;
    }
    set hostname(v) {
      setUrlPart(this, 'hostname', v, false);
    }
    get port() {
      return urlOf(this).rec.port;
    }
    set port(v) {
      setUrlPart(this, 'port', v, false);
    }
    get pathname() {
      return urlOf(this).rec.pathname;
    }
    set pathname(v) {
      setUrlPart(this, 'pathname', v, false);
    }
    get search() {
      return urlOf(this).rec.search;
    }
    set search(v) {
      setUrlPart(this, 'search', v, false);
    }
    get hash() {
      return urlOf(this).rec.hash;
    }
    set hash(v) {
      setUrlPart(this, 'hash', v, false);
    }
    get searchParams() {
      const st = urlOf(this);
      if (!st.params) {
        st.params = new URLSearchParams(StringSlice(st.rec.search, 1));
        WeakMapGet(paramsState, st.params).url = this;
      }
      return st.params;
    }
    toString() {
      return urlOf(this).rec.href;
    }
    toJSON() {
      return urlOf(this).rec.href;
    }
    get [Symbol.toStringTag]() {
      return 'URL';
    }
  }
  return { URL: URL, URLSearchParams: URLSearchParams };
});
lazyGlobal('URL', function () {
  return getUrlClasses().URL;
});
lazyGlobal('URLSearchParams', function () {
  return getUrlClasses().URLSearchParams;
});
