/*
 * call.js: the call page's logic (served by audio/webpage.py, loaded after codec.js and dsp.js).
 *
 * Start call (a user gesture, which browsers require for the microphone and an AudioContext):
 *   AudioContext + getUserMedia(echoCancellation, noiseSuppression, autoGainControl) -> websocket
 *   to the patient (URL from <meta name="encsim-ws">) -> capture through the AudioWorklet in
 *   /capture-worklet.js (ScriptProcessorNode if worklets are unavailable) -> 16 kHz mono int16,
 *   one AudioRawFrame of 320 samples (20 ms) per websocket message.
 * Received frames: audio -> scheduled gap-free on the AudioContext behind a small jitter buffer;
 *   interruption -> stop and drop all scheduled audio; message -> JSON from the patient side:
 *     {"type":"transcript","speaker":"agent"|"patient","text":...}  a transcript line
 *     {"type":"status","text":...}                                   the status line
 *     {"type":"call_ended","reason":...}                             stop the mic, show the reason
 *   other types, text and transcription frames are ignored.
 * Hang up: send the message {"type":"hangup"}, close the websocket, stop the mic and playback.
 * Everything shown comes from textContent: nothing received is ever parsed as HTML.
 */
(function () {
  'use strict';

  var Codec = window.EncsimCodec;
  var Dsp = window.EncsimDsp;
  var els = {
    start: document.getElementById('start'),
    hangup: document.getElementById('hangup'),
    status: document.getElementById('status'),
    level: document.getElementById('level'),
    diag: document.getElementById('diag'),
    transcript: document.getElementById('transcript'),
  };
  var MAX_BUFFERED_BYTES = 64 * 1024; // about 2 s of outgoing audio; beyond it frames are dropped
  var JITTER_SEC = 0.08;
  var wsUrl = readWsUrl();
  var call = null; // the current call's state, or null when idle

  function readWsUrl() {
    var meta = document.querySelector('meta[name="encsim-ws"]');
    var raw = meta ? meta.getAttribute('content') : '';
    try {
      var u = new URL(raw);
      if (u.protocol === 'ws:' || u.protocol === 'wss:') return u.href;
    } catch (e) { /* fall through */ }
    return null;
  }

  function setStatus(text, kind) {
    els.status.textContent = text;
    els.status.setAttribute('data-kind', kind || '');
  }

  function setIdle(idle) {
    els.start.disabled = !idle || !wsUrl;
    els.hangup.disabled = idle;
  }

  function addLine(speaker, text) {
    var li = document.createElement('li');
    var who = document.createElement('span');
    who.className = 'who';
    if (speaker === 'agent') {
      li.className = 'agent';
      who.textContent = 'You:';
    } else if (speaker === 'patient') {
      li.className = 'patient';
      who.textContent = 'Patient:';
    } else {
      who.textContent = String(speaker || '?') + ':';
    }
    var said = document.createElement('span');
    said.textContent = text;
    li.appendChild(who);
    li.appendChild(said);
    els.transcript.appendChild(li);
    els.transcript.scrollTop = els.transcript.scrollHeight;
  }

  function describeMediaError(err) {
    var name = err && err.name;
    if (name === 'NotAllowedError' || name === 'SecurityError') {
      return 'Microphone permission was denied. Allow it for this page and press Start call again.';
    }
    if (name === 'NotFoundError' || name === 'OverconstrainedError') return 'No microphone was found.';
    if (name === 'NotReadableError') return 'The microphone is in use by another program or could not be opened.';
    return 'Could not start the microphone: ' + (err && err.message ? err.message : String(err));
  }

  async function startCall() {
    if (call) return;
    if (!wsUrl) {
      setStatus('No patient websocket URL is configured for this page.', 'error');
      return;
    }
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      setStatus('This browser does not allow microphone capture here; open the page via 127.0.0.1 or localhost.',
                'error');
      return;
    }
    var c = call = {
      ctx: null, stream: null, ws: null, source: null, captureNode: null, captureKind: '', framer: null,
      sources: new Set(), clock: new Dsp.PlaybackClock(JITTER_SEC), timer: 0,
      opened: false, errored: false, ended: false, endReason: '', userHangup: false, closed: false,
      sent: 0, dropped: 0, played: 0,
    };
    setIdle(false);
    try {
      var AC = window.AudioContext || window.webkitAudioContext;
      c.ctx = new AC({ latencyHint: 'interactive' });
      var resumed = c.ctx.resume(); // started inside the click, awaited below
      setStatus('Asking for the microphone…');
      var stream = await navigator.mediaDevices.getUserMedia({
        audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true },
      });
      c.stream = stream;
      await resumed;
      if (call !== c) { teardown(c, true); return; } // hung up while we waited
      setStatus('Connecting to the patient…');
      openSocket(c);
    } catch (err) {
      setStatus(describeMediaError(err), 'error');
      teardown(c, true);
    }
  }

  function openSocket(c) {
    var ws;
    try {
      ws = new WebSocket(wsUrl);
    } catch (err) {
      setStatus('Could not open the connection to the patient: ' + err.message, 'error');
      teardown(c, true);
      return;
    }
    c.ws = ws;
    ws.binaryType = 'arraybuffer';
    ws.onopen = function () {
      if (call !== c) { ws.close(1000); return; }
      c.opened = true;
      setStatus('Connected. Speak to the patient.');
      startCapture(c).catch(function (err) {
        setStatus('Microphone capture failed: ' + (err && err.message ? err.message : String(err)), 'error');
        hangUp();
      });
    };
    ws.onmessage = function (event) { onSocketData(c, event.data); };
    ws.onerror = function () {
      c.errored = true;
      if (call === c && !c.userHangup) setStatus('Connection error with the patient at ' + wsUrl + '.', 'error');
    };
    ws.onclose = function (event) { onSocketClosed(c, event); };
  }

  function onSocketClosed(c, event) {
    c.closed = true;
    var mine = call === c;
    if (c.userHangup) {
      if (mine || call === null) setStatus('Call ended: you hung up.', 'ended');
    } else if (c.ended) {
      if (mine || call === null) setStatus('Call ended: ' + c.endReason, 'ended');
    } else if (!c.opened) {
      setStatus('Could not connect to the patient at ' + wsUrl + ' (is the patient running?).', 'error');
    } else if (mine) {
      var why = event.reason ? ', ' + event.reason : '';
      setStatus('The connection to the patient closed (code ' + event.code + why + ').',
                event.code === 1000 ? 'ended' : 'error');
    }
    if (mine) teardown(c, false); // let already-received speech finish playing
  }

  function onSocketData(c, data) {
    if (!(data instanceof ArrayBuffer)) return; // the protocol is binary protobuf only
    var frame;
    try {
      frame = Codec.decodeFrame(new Uint8Array(data));
    } catch (err) {
      console.warn('encsim: undecodable frame', err);
      return;
    }
    if (frame.kind === 'audio') playAudio(c, frame);
    else if (frame.kind === 'interruption') stopPlayback(c);
    else if (frame.kind === 'message') onMessage(c, frame.data);
    // text, transcription and unknown frames are not shown
  }

  function onMessage(c, data) {
    var msg;
    try {
      msg = JSON.parse(data);
    } catch (err) {
      return;
    }
    if (!msg || typeof msg !== 'object') return;
    if (msg.type === 'transcript') {
      if (typeof msg.text === 'string') addLine(msg.speaker, msg.text);
    } else if (msg.type === 'status') {
      if (typeof msg.text === 'string' && call === c) setStatus(msg.text);
    } else if (msg.type === 'call_ended') {
      c.ended = true;
      c.endReason = msg.reason == null || msg.reason === '' ? 'no reason given' : String(msg.reason);
      stopCapture(c);
      if (call === c) setStatus('Call ended: ' + c.endReason, 'ended');
      // Let the last words play, then close our side if the patient has not already.
      var wait = c.ctx ? c.clock.buffered(c.ctx.currentTime) : 0;
      setTimeout(function () {
        if (c.ws && c.ws.readyState === WebSocket.OPEN) c.ws.close(1000, 'call ended');
      }, (wait + 0.5) * 1000);
    }
  }

  function playAudio(c, frame) {
    var ctx = c.ctx;
    if (!ctx || ctx.state === 'closed' || frame.audio.length === 0) return;
    var rate = frame.sampleRate;
    var numChannels = frame.numChannels || 1;
    if (!(rate >= 3000 && rate <= 768000) || numChannels > 32) return;
    var channels = Dsp.deinterleave(frame.audio, numChannels);
    var n = channels[0].length;
    if (n === 0) return;
    var buffer = ctx.createBuffer(channels.length, n, rate);
    for (var k = 0; k < channels.length; k++) buffer.getChannelData(k).set(channels[k]);
    var src = ctx.createBufferSource();
    src.buffer = buffer;
    src.connect(ctx.destination);
    var when = c.clock.schedule(ctx.currentTime, buffer.duration);
    src.onended = function () { c.sources.delete(src); };
    c.sources.add(src);
    src.start(when);
    c.played++;
  }

  function stopPlayback(c) {
    c.sources.forEach(function (src) {
      try { src.stop(); } catch (e) { /* not started or already stopped */ }
      try { src.disconnect(); } catch (e) { /* already disconnected */ }
    });
    c.sources.clear();
    c.clock.reset();
  }

  async function startCapture(c) {
    var ctx = c.ctx;
    c.framer = new Dsp.CaptureFramer(ctx.sampleRate, function (frame) { sendAudio(c, frame); });
    c.source = ctx.createMediaStreamSource(c.stream);
    if (ctx.audioWorklet && typeof AudioWorkletNode === 'function') {
      try {
        await ctx.audioWorklet.addModule('/capture-worklet.js');
        if (call !== c || !c.stream) return;
        var node = new AudioWorkletNode(ctx, 'encsim-capture', {
          numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [1],
        });
        node.port.onmessage = function (event) { if (c.framer) c.framer.push(event.data); };
        c.source.connect(node);
        node.connect(ctx.destination); // keeps the node pulled; it outputs silence
        c.captureNode = node;
        c.captureKind = 'AudioWorklet';
      } catch (err) {
        console.warn('encsim: AudioWorklet unavailable, using ScriptProcessorNode', err);
      }
    }
    if (!c.captureNode) {
      if (call !== c || !c.stream) return;
      var sp = ctx.createScriptProcessor(1024, 1, 1);
      sp.onaudioprocess = function (event) {
        if (c.framer) c.framer.push(event.inputBuffer.getChannelData(0));
        event.outputBuffer.getChannelData(0).fill(0);
      };
      c.source.connect(sp);
      sp.connect(ctx.destination);
      c.captureNode = sp;
      c.captureKind = 'ScriptProcessor';
    }
    c.timer = setInterval(function () { updateMeter(c); }, 100);
  }

  function updateMeter(c) {
    if (!c.framer) return;
    els.level.value = Math.min(1, c.framer.takePeak());
    els.diag.textContent = 'mic ' + c.ctx.sampleRate + ' Hz via ' + c.captureKind + ' → 16 kHz · sent ' +
      c.sent + ' frames' + (c.dropped ? ' (' + c.dropped + ' dropped)' : '') + ' · received ' + c.played +
      ' audio chunks · ' + c.sources.size + ' queued (' + c.clock.buffered(c.ctx.currentTime).toFixed(2) + ' s)';
  }

  function sendAudio(c, frame) {
    var ws = c.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN || c.ended || c.userHangup) return;
    if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      c.dropped++;
      return;
    }
    ws.send(Codec.encodeAudioFrame(frame, Dsp.TARGET_RATE, 1));
    c.sent++;
  }

  function stopCapture(c) {
    if (c.timer) {
      clearInterval(c.timer);
      c.timer = 0;
      updateMeter(c);
    }
    els.level.value = 0;
    if (c.captureNode) {
      if (c.captureNode.port) c.captureNode.port.postMessage('stop');
      if ('onaudioprocess' in c.captureNode) c.captureNode.onaudioprocess = null;
      try { c.captureNode.disconnect(); } catch (e) { /* already */ }
      c.captureNode = null;
    }
    if (c.source) {
      try { c.source.disconnect(); } catch (e) { /* already */ }
      c.source = null;
    }
    if (c.stream) {
      c.stream.getTracks().forEach(function (t) { t.stop(); });
      c.stream = null;
    }
    c.framer = null;
  }

  /* Release everything of call `c`; `now` also cuts playback, otherwise it is let finish. */
  function teardown(c, now) {
    stopCapture(c);
    var ctx = c.ctx;
    if (ctx && ctx.state !== 'closed') {
      var wait = now ? 0 : c.clock.buffered(ctx.currentTime);
      if (now) stopPlayback(c);
      setTimeout(function () {
        stopPlayback(c);
        if (ctx.state !== 'closed') ctx.close().catch(function () {});
      }, wait * 1000 + 100);
    }
    if (call === c) {
      call = null;
      setIdle(true);
    }
  }

  function hangUp() {
    var c = call;
    if (!c) return;
    c.userHangup = true;
    var ws = c.ws;
    if (ws && ws.readyState === WebSocket.OPEN) {
      try {
        ws.send(Codec.encodeMessageFrame(JSON.stringify({ type: 'hangup' })));
      } catch (err) { /* closing anyway */ }
    }
    if (ws && ws.readyState !== WebSocket.CLOSED) ws.close(1000, 'hangup');
    setStatus('Hanging up…', 'ended');
    teardown(c, true);
    if (!ws) setStatus('Call ended: you hung up.', 'ended');
  }

  els.start.addEventListener('click', function () { startCall(); });
  els.hangup.addEventListener('click', hangUp);
  window.addEventListener('pagehide', hangUp);
  setIdle(true);
  if (wsUrl) setStatus('Ready. Press Start call and allow the microphone.');
  else setStatus('No patient websocket URL is configured for this page.', 'error');
})();
