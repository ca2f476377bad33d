/*
 * codec.js: hand-written protobuf codec for pipecat's websocket wire format
 * (pipecat/frames/frames.proto, ProtobufFrameSerializer). No dependencies.
 *
 * One websocket binary message is one `pipecat.Frame`:
 *
 *   message Frame { oneof frame {
 *     TextFrame text = 1;                 // {id=1 uint64, name=2 string, text=3 string}
 *     AudioRawFrame audio = 2;            // {id=1, name=2, audio=3 bytes (int16 LE PCM),
 *                                         //  sample_rate=4 uint32, num_channels=5 uint32,
 *                                         //  pts=6 optional uint64}
 *     TranscriptionFrame transcription = 3; // {id=1, name=2, text=3, user_id=4, timestamp=5}
 *     MessageFrame message = 4;           // {data=1 string (JSON)}
 *     InterruptionFrame interruption = 5; // {id=1, name=2}
 *   } }
 *
 * Wire types used: 0 (varint) and 2 (length-delimited). Unknown fields of wire
 * types 0, 1, 2 and 5 are skipped; groups (3, 4) and truncated data throw.
 * Proto3 defaults apply: a field that is absent decodes as 0 / "" / empty.
 *
 * Works in the browser (globals `EncsimCodec.*`) and in node (module.exports).
 */
(function (root) {
  'use strict';

  var WIRE_VARINT = 0;
  var WIRE_I64 = 1;
  var WIRE_LEN = 2;
  var WIRE_I32 = 5;

  var utf8Encoder = new TextEncoder();
  var utf8Decoder = new TextDecoder('utf-8');

  // ---- encoding -----------------------------------------------------------

  function Writer() {
    this.chunks = [];
    this.length = 0;
  }
  Writer.prototype.bytes = function (u8) {
    this.chunks.push(u8);
    this.length += u8.length;
  };
  Writer.prototype.varint = function (value) {
    // value: a non-negative integer Number (<= 2^53 - 1).
    if (!(Number.isInteger(value) && value >= 0 && value <= Number.MAX_SAFE_INTEGER)) {
      throw new RangeError('varint out of range: ' + value);
    }
    var out = [];
    while (value > 0x7f) {
      out.push((value % 128) | 0x80);
      value = Math.floor(value / 128);
    }
    out.push(value);
    this.bytes(Uint8Array.from(out));
  };
  Writer.prototype.tag = function (field, wireType) {
    this.varint(field * 8 + wireType);
  };
  Writer.prototype.lenField = function (field, u8) {
    this.tag(field, WIRE_LEN);
    this.varint(u8.length);
    this.bytes(u8);
  };
  Writer.prototype.varintField = function (field, value) {
    // proto3: zero is the default and is not written.
    if (value) {
      this.tag(field, WIRE_VARINT);
      this.varint(value);
    }
  };
  Writer.prototype.finish = function () {
    var out = new Uint8Array(this.length);
    var off = 0;
    for (var i = 0; i < this.chunks.length; i++) {
      out.set(this.chunks[i], off);
      off += this.chunks[i].length;
    }
    return out;
  };

  function int16ToLeBytes(samples) {
    var out = new Uint8Array(samples.length * 2);
    var view = new DataView(out.buffer);
    for (var i = 0; i < samples.length; i++) {
      view.setInt16(i * 2, samples[i], true);
    }
    return out;
  }

  function wrapFrame(field, inner) {
    var w = new Writer();
    w.lenField(field, inner);
    return w.finish();
  }

  /** Encode one AudioRawFrame (oneof field 2) from int16 samples (interleaved if numChannels > 1). */
  function encodeAudioFrame(int16Array, sampleRate, numChannels) {
    if (!(int16Array instanceof Int16Array)) {
      throw new TypeError('encodeAudioFrame: samples must be an Int16Array');
    }
    if (!(Number.isInteger(sampleRate) && sampleRate > 0 && sampleRate < 0x100000000)) {
      throw new RangeError('encodeAudioFrame: bad sample rate ' + sampleRate);
    }
    if (numChannels === undefined) numChannels = 1;
    if (!(Number.isInteger(numChannels) && numChannels > 0 && numChannels < 0x100000000)) {
      throw new RangeError('encodeAudioFrame: bad channel count ' + numChannels);
    }
    var w = new Writer();
    if (int16Array.length > 0) w.lenField(3, int16ToLeBytes(int16Array));
    w.varintField(4, sampleRate);
    w.varintField(5, numChannels);
    return wrapFrame(2, w.finish());
  }

  /** Encode one MessageFrame (oneof field 4); `jsonString` is sent as-is (UTF-8). */
  function encodeMessageFrame(jsonString) {
    if (typeof jsonString !== 'string') {
      throw new TypeError('encodeMessageFrame: expects a JSON string');
    }
    var w = new Writer();
    if (jsonString.length > 0) w.lenField(1, utf8Encoder.encode(jsonString));
    return wrapFrame(4, w.finish());
  }

  // ---- decoding -----------------------------------------------------------

  function Reader(u8) {
    this.buf = u8;
    this.pos = 0;
  }
  Reader.prototype.eof = function () {
    return this.pos >= this.buf.length;
  };
  Reader.prototype.varint = function () {
    // Exact Number up to 2^53 - 1; a BigInt beyond that (uint64 ids).
    var result = 0;
    var big = null;
    for (var i = 0; i < 10; i++) {
      if (this.pos >= this.buf.length) throw new Error('protobuf: truncated varint');
      var b = this.buf[this.pos++];
      if (i < 7) {
        result += (b & 0x7f) * Math.pow(2, 7 * i);
      } else {
        if (big === null) big = BigInt(result);
        big += BigInt(b & 0x7f) << BigInt(7 * i);
      }
      if ((b & 0x80) === 0) {
        if (big === null) return result;
        big = BigInt.asUintN(64, big);
        return big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
      }
    }
    throw new Error('protobuf: varint longer than 10 bytes');
  };
  Reader.prototype.lenBytes = function () {
    var n = this.varint();
    if (typeof n !== 'number' || this.pos + n > this.buf.length) {
      throw new Error('protobuf: truncated length-delimited field');
    }
    var out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  };
  Reader.prototype.skip = function (wireType) {
    switch (wireType) {
      case WIRE_VARINT: this.varint(); return;
      case WIRE_I64: this.advance(8); return;
      case WIRE_LEN: this.lenBytes(); return;
      case WIRE_I32: this.advance(4); return;
      default: throw new Error('protobuf: unsupported wire type ' + wireType);
    }
  };
  Reader.prototype.advance = function (n) {
    if (this.pos + n > this.buf.length) throw new Error('protobuf: truncated fixed field');
    this.pos += n;
  };

  /* Read a message whose fields are all varints or strings/bytes, per `schema`:
   * {fieldNumber: [name, 'varint'|'string'|'bytes']}. Absent fields keep defaults. */
  function readMessage(u8, schema, out) {
    var r = new Reader(u8);
    while (!r.eof()) {
      var key = r.varint();
      if (typeof key !== 'number') throw new Error('protobuf: bad field key');
      var field = Math.floor(key / 8);
      var wireType = key % 8;
      var spec = schema[field];
      if (field === 0) throw new Error('protobuf: field number 0');
      if (!spec) { r.skip(wireType); continue; }
      var name = spec[0];
      var type = spec[1];
      if (type === 'varint') {
        if (wireType !== WIRE_VARINT) { r.skip(wireType); continue; }
        out[name] = r.varint();
      } else {
        if (wireType !== WIRE_LEN) { r.skip(wireType); continue; }
        var bytes = r.lenBytes();
        out[name] = type === 'string' ? utf8Decoder.decode(bytes) : bytes.slice();
      }
    }
    return out;
  }

  function leBytesToInt16(u8) {
    var n = u8.length >> 1; // an odd trailing byte is ignored
    var out = new Int16Array(n);
    var view = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
    for (var i = 0; i < n; i++) out[i] = view.getInt16(i * 2, true);
    return out;
  }

  var ID_NAME = { 1: ['id', 'varint'], 2: ['name', 'string'] };
  function withIdName(extra) {
    var s = { 1: ID_NAME[1], 2: ID_NAME[2] };
    for (var k in extra) s[k] = extra[k];
    return s;
  }

  var SCHEMAS = {
    1: ['text', withIdName({ 3: ['text', 'string'] }), function () { return { id: 0, name: '', text: '' }; }],
    2: ['audio', withIdName({ 3: ['audio', 'bytes'], 4: ['sampleRate', 'varint'], 5: ['numChannels', 'varint'],
                             6: ['pts', 'varint'] }),
        function () {
          return { id: 0, name: '', audio: new Uint8Array(0), sampleRate: 0, numChannels: 0, pts: null };
        }],
    3: ['transcription', withIdName({ 3: ['text', 'string'], 4: ['userId', 'string'], 5: ['timestamp', 'string'] }),
        function () { return { id: 0, name: '', text: '', userId: '', timestamp: '' }; }],
    4: ['message', { 1: ['data', 'string'] }, function () { return { data: '' }; }],
    5: ['interruption', ID_NAME, function () { return { id: 0, name: '' }; }],
  };

  /**
   * Decode one websocket message (a pipecat.Frame) into
   * {kind: 'audio'|'text'|'transcription'|'message'|'interruption'|'unknown', ...fields}.
   * audio: {audio: Int16Array, sampleRate, numChannels, id, name, pts}; text: {text, id, name};
   * transcription: {text, userId, timestamp, id, name}; message: {data}; interruption: {id, name}.
   * Throws on malformed protobuf.
   */
  function decodeFrame(u8) {
    if (u8 instanceof ArrayBuffer) u8 = new Uint8Array(u8);
    if (!(u8 instanceof Uint8Array)) throw new TypeError('decodeFrame: expects a Uint8Array or ArrayBuffer');
    var r = new Reader(u8);
    var found = null;
    while (!r.eof()) {
      var key = r.varint();
      if (typeof key !== 'number') throw new Error('protobuf: bad field key');
      var field = Math.floor(key / 8);
      var wireType = key % 8;
      if (SCHEMAS[field] && wireType === WIRE_LEN) {
        found = { field: field, bytes: r.lenBytes() }; // oneof: the last one wins
      } else {
        r.skip(wireType);
      }
    }
    if (found === null) return { kind: 'unknown' };
    var spec = SCHEMAS[found.field];
    var out = readMessage(found.bytes, spec[1], spec[2]());
    out.kind = spec[0];
    if (out.kind === 'audio') out.audio = leBytesToInt16(out.audio);
    return out;
  }

  var api = {
    encodeAudioFrame: encodeAudioFrame,
    encodeMessageFrame: encodeMessageFrame,
    decodeFrame: decodeFrame,
  };
  if (typeof module !== 'undefined' && module.exports) {
    module.exports = api;
  } else {
    root.EncsimCodec = api;
  }
})(typeof self !== 'undefined' ? self : this);
