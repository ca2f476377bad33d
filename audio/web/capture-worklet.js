/*
 * capture-worklet.js: AudioWorklet processor 'encsim-capture'. Mixes the microphone input to mono
 * and posts Float32Array batches (about 10 ms, at the AudioContext's rate) to the page, which
 * resamples them to 16 kHz and frames them (dsp.js). It writes nothing to its output.
 */
class EncsimCapture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.batch = new Float32Array(512);
    this.fill = 0;
    this.running = true;
    this.port.onmessage = (event) => {
      if (event.data === 'stop') this.running = false;
    };
  }

  process(inputs) {
    if (!this.running) return false;
    const input = inputs[0];
    if (!input || input.length === 0) return true;
    const n = input[0].length;
    const channels = input.length;
    for (let i = 0; i < n; i++) {
      let sum = 0;
      for (let c = 0; c < channels; c++) sum += input[c][i];
      this.batch[this.fill++] = sum / channels;
      if (this.fill === this.batch.length) {
        this.port.postMessage(this.batch, [this.batch.buffer]);
        this.batch = new Float32Array(512);
        this.fill = 0;
      }
    }
    return true;
  }
}

registerProcessor('encsim-capture', EncsimCapture);
