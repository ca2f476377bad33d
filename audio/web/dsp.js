/*
 * dsp.js: the page's small signal-processing helpers, kept free of DOM and Web Audio so they run
 * (and are tested) in node too. Browser: globals `EncsimDsp.*`; node: module.exports.
 *
 * - CaptureFramer: microphone Float32 blocks at the AudioContext's rate (44.1 / 48 kHz, any) ->
 *   anti-alias low-pass (8th-order Butterworth as four biquads, -3 dB at 6.5 kHz,
 *   about -17 dB at 8 kHz and -55 dB at 12 kHz) -> linear
 *   interpolation to 16 kHz -> int16 -> exactly 320-sample (20 ms) frames handed to a callback.
 * - PlaybackClock: start times for gap-free scheduling of received audio with a small jitter
 *   buffer; after an underrun (or a reset on interruption) playback restarts `jitterSec` ahead.
 * - int16ToFloat32 / deinterleave: received PCM to Web Audio channel data.
 */
(function (root) {
  'use strict';

  var TARGET_RATE = 16000;
  var FRAME_SAMPLES = 320; // 20 ms at 16 kHz
  var CUTOFF_HZ = 6500;
  var BUTTERWORTH8_Q = [0.50979558, 0.60134489, 0.89997622, 2.5629154];

  function Biquad(b0, b1, b2, a1, a2) {
    this.b0 = b0; this.b1 = b1; this.b2 = b2; this.a1 = a1; this.a2 = a2;
    this.z1 = 0; this.z2 = 0;
  }
  Biquad.lowpass = function (sampleRate, cutoff, q) {
    // RBJ cookbook low-pass.
    var w0 = 2 * Math.PI * cutoff / sampleRate;
    var alpha = Math.sin(w0) / (2 * q);
    var cos = Math.cos(w0);
    var a0 = 1 + alpha;
    return new Biquad((1 - cos) / 2 / a0, (1 - cos) / a0, (1 - cos) / 2 / a0, -2 * cos / a0, (1 - alpha) / a0);
  };
  Biquad.prototype.process = function (x) {
    // Transposed direct form II.
    var y = this.b0 * x + this.z1;
    this.z1 = this.b1 * x - this.a1 * y + this.z2;
    this.z2 = this.b2 * x - this.a2 * y;
    return y;
  };

  function floatToInt16(s) {
    if (!(s === s)) return 0; // NaN
    if (s >= 1) return 32767;
    if (s <= -1) return -32768;
    return s < 0 ? Math.round(s * 32768) : Math.round(s * 32767);
  }

  /**
   * @param {number} inputRate  the AudioContext sample rate
   * @param {function(Int16Array)} onFrame  called with each complete 320-sample 16 kHz frame
   */
  function CaptureFramer(inputRate, onFrame) {
    if (!(inputRate > 0)) throw new RangeError('CaptureFramer: bad input rate ' + inputRate);
    this.inputRate = inputRate;
    this.onFrame = onFrame;
    this.step = inputRate / TARGET_RATE; // input samples per output sample
    this.filters = inputRate > TARGET_RATE
      ? BUTTERWORTH8_Q.map(function (q) { return Biquad.lowpass(inputRate, CUTOFF_HZ, q); })
      : [];
    this.t = 1; // read position in [last, ...block] coordinates
    this.last = 0;
    this.frame = new Int16Array(FRAME_SAMPLES);
    this.fill = 0;
    this.peak = 0; // max |sample| since the last takePeak(), for a level meter
  }
  CaptureFramer.prototype.push = function (block) {
    var n = block.length;
    if (n === 0) return;
    var x = new Float32Array(n);
    var f = this.filters;
    for (var i = 0; i < n; i++) {
      var v = block[i];
      for (var k = 0; k < f.length; k++) v = f[k].process(v);
      x[i] = v;
      var a = v < 0 ? -v : v;
      if (a > this.peak) this.peak = a;
    }
    // y[0] = last sample of the previous block, y[j] = x[j - 1].
    var t = this.t;
    while (t < n) {
      var j = Math.floor(t);
      var frac = t - j;
      var y0 = j === 0 ? this.last : x[j - 1];
      var y1 = x[j];
      this.emit(floatToInt16(y0 + (y1 - y0) * frac));
      t += this.step;
    }
    this.t = t - n;
    this.last = x[n - 1];
  };
  CaptureFramer.prototype.emit = function (sample) {
    this.frame[this.fill++] = sample;
    if (this.fill === FRAME_SAMPLES) {
      var done = this.frame;
      this.frame = new Int16Array(FRAME_SAMPLES);
      this.fill = 0;
      this.onFrame(done);
    }
  };
  CaptureFramer.prototype.takePeak = function () {
    var p = this.peak;
    this.peak = 0;
    return p;
  };

  /** Start times for gap-free playback; `jitterSec` of buffer when (re)starting. */
  function PlaybackClock(jitterSec) {
    this.jitterSec = jitterSec === undefined ? 0.08 : jitterSec;
    this.next = -Infinity;
  }
  /** When to start a chunk of `durationSec` given the context's `nowSec`; advances the clock. */
  PlaybackClock.prototype.schedule = function (nowSec, durationSec) {
    if (this.next < nowSec) this.next = nowSec + this.jitterSec; // first chunk, or underrun
    var start = this.next;
    this.next += durationSec;
    return start;
  };
  /** Forget scheduled audio (interruption): the next chunk starts a fresh jitter buffer. */
  PlaybackClock.prototype.reset = function () {
    this.next = -Infinity;
  };
  /** Seconds of audio scheduled but not yet played. */
  PlaybackClock.prototype.buffered = function (nowSec) {
    return this.next > nowSec ? this.next - nowSec : 0;
  };

  function int16ToFloat32(int16) {
    var out = new Float32Array(int16.length);
    for (var i = 0; i < int16.length; i++) out[i] = int16[i] / 32768;
    return out;
  }

  /** Interleaved int16 -> one Float32Array per channel. */
  function deinterleave(int16, numChannels) {
    var ch = numChannels > 0 ? numChannels : 1;
    var frames = Math.floor(int16.length / ch);
    var out = [];
    for (var c = 0; c < ch; c++) out.push(new Float32Array(frames));
    for (var i = 0; i < frames; i++) {
      for (var k = 0; k < ch; k++) out[k][i] = int16[i * ch + k] / 32768;
    }
    return out;
  }

  var api = {
    TARGET_RATE: TARGET_RATE,
    FRAME_SAMPLES: FRAME_SAMPLES,
    CaptureFramer: CaptureFramer,
    PlaybackClock: PlaybackClock,
    floatToInt16: floatToInt16,
    int16ToFloat32: int16ToFloat32,
    deinterleave: deinterleave,
  };
  if (typeof module !== 'undefined' && module.exports) {
    module.exports = api;
  } else {
    root.EncsimDsp = api;
  }
})(typeof self !== 'undefined' ? self : this);
