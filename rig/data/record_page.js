// rig voices record: the recording page's script (rig/voices/record_page.py inlines it).
const TOKEN = document.body.dataset.token;
const H = {'X-Rig-Token': TOKEN};
const $ = id => document.getElementById(id);
let S = null, cur = 0, mic = null, chunks = [], recording = false, startedAt = 0;
const WORKLET = `class Tap extends AudioWorkletProcessor {
  constructor(){super(); this.buf = new Float32Array(2048); this.n = 0;}
  process(inputs){ const ch = inputs[0] && inputs[0][0]; if (!ch) return true;
    for (let i = 0; i < ch.length; i++){ this.buf[this.n++] = ch[i];
      if (this.n === this.buf.length){ this.port.postMessage(this.buf); this.buf = new Float32Array(2048); this.n = 0; } }
    return true; } }
registerProcessor('rig-tap', Tap);`;

async function api(path, opts = {}) {
  const r = await fetch(path, {...opts, headers: {...H, ...(opts.headers || {})}});
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.detail ? (typeof body.detail === 'string' ? body.detail : JSON.stringify(body.detail)) : r.status);
  return body;
}
function status(msg, warn) { const s = $('status'); s.textContent = msg; s.className = warn ? 'warn' : ''; }
function dbfs(x) { return x > 0 ? 20 * Math.log10(x) : -Infinity; }

async function openMic() {
  const stream = await navigator.mediaDevices.getUserMedia({audio: {channelCount: 1,
    echoCancellation: false, noiseSuppression: false, autoGainControl: false}});
  const ctx = new AudioContext();
  await ctx.audioWorklet.addModule(URL.createObjectURL(new Blob([WORKLET], {type: 'text/javascript'})));
  const node = new AudioWorkletNode(ctx, 'rig-tap');
  ctx.createMediaStreamSource(stream).connect(node);
  node.port.onmessage = e => { if (recording) chunks.push(e.data); meter(e.data); };
  const label = stream.getAudioTracks()[0].label || '';
  return {stream, ctx, node, label, rate: ctx.sampleRate};
}
async function closeMic() {
  if (!mic) return; mic.stream.getTracks().forEach(t => t.stop()); await mic.ctx.close(); mic = null;
  $('meterbar').style.width = '0'; $('level').textContent = '';
}
function meter(block) {
  let s = 0, p = 0; for (const v of block) { s += v * v; p = Math.max(p, Math.abs(v)); }
  const rms = dbfs(Math.sqrt(s / block.length)), pk = dbfs(p);
  const w = Math.max(0, Math.min(100, (rms + 60) / 60 * 100));
  $('meterbar').style.width = w + '%'; $('meterbar').className = pk > -1 ? 'hot' : '';
  $('level').textContent = `level ${isFinite(rms) ? rms.toFixed(0) : '-inf'} dBFS, peak ${isFinite(pk) ? pk.toFixed(1) : '-inf'} dBFS` + (pk > -1 ? ' (too loud: move back or lower the input)' : '');
  if (recording) $('clock').textContent = ((performance.now() - startedAt) / 1000).toFixed(1) + ' s';
}

function show(step) { for (const id of ['consent', 'about', 'record']) $(id).classList.toggle('hidden', id !== step); }
function progress() {
  const done = S.answers.filter(a => a.recorded).length;
  $('bar').max = S.answers.length; $('bar').value = done;
  $('count').textContent = `${done} of ${S.answers.length} answers recorded`;
  const nav = $('list'); nav.textContent = '';
  S.answers.forEach((a, i) => { const b = document.createElement('button');
    b.textContent = a.answer_id; b.dataset.answer = a.answer_id;
    b.className = (a.recorded ? 'done' : '') + (i === cur ? ' current' : '');
    b.onclick = () => { if (!recording) { cur = i; render(); loadPlayer(); } }; nav.appendChild(b); });
}
function render() {
  const a = S.answers[cur]; progress();
  $('qid').textContent = `${a.answer_id} (${cur + 1} of ${S.answers.length})`;
  $('question').textContent = 'Question: ' + a.question;
  const sc = $('script'); sc.textContent = '';
  for (const [kind, v] of a.segments) {
    const el = document.createElement('span');
    if (kind === 'words') { el.textContent = v + ' '; }
    else if (kind === 'pause') { el.className = 'cue'; el.textContent = `pause ${v} s`; el.title = `stay silent for about ${v} seconds`; }
    else { el.className = 'filler'; el.textContent = v; el.title = `say "${v}" here`; }
    sc.appendChild(el); if (kind !== 'words') sc.appendChild(document.createTextNode(' '));
  }
  $('rec').textContent = a.recorded ? 'Re-take' : 'Record';
  const pl = $('player');
  pl.removeAttribute('src'); delete pl.dataset.loaded;
  if (a.recorded) { pl.dataset.src = `/api/recordings/${encodeURIComponent(a.answer_id)}`; pl.classList.remove('hidden'); }
  else { delete pl.dataset.src; pl.classList.add('hidden'); }
  $('saved').textContent = a.recorded ? `saved: ${a.recorded.file}, ${a.recorded.duration_s} s at ${a.recorded.sample_rate_hz} Hz` : 'not recorded yet';
}
// an <audio> element's own request cannot carry X-Rig-Token: fetch the take, play a blob
async function loadPlayer() {
  const pl = $('player'), src = pl.dataset.src, id = S.answers[cur].answer_id; if (!src) return;
  const r = await fetch(src, {headers: H, cache: 'no-store'}); if (!r.ok || pl.dataset.src !== src) return;
  if (pl.src) URL.revokeObjectURL(pl.src);
  pl.src = URL.createObjectURL(await r.blob()); pl.dataset.loaded = id;
}

async function startRec() {
  try { mic = await openMic(); } catch (e) { status('microphone: ' + e.message, true); return; }
  chunks = []; recording = true; startedAt = performance.now();
  $('rec').classList.add('on'); $('rec').disabled = true; $('stop').disabled = false; $('check').disabled = true;
  status('recording: read the script, then press Stop');
  mic.timer = setTimeout(stopRec, S.max_take_s * 1000);
}
async function stopRec() {
  if (!recording) return; recording = false; clearTimeout(mic.timer);
  const rate = mic.rate; await closeMic();
  $('rec').classList.remove('on'); $('rec').disabled = false; $('stop').disabled = true; $('check').disabled = false;
  const n = chunks.reduce((k, c) => k + c.length, 0), pcm = new Int16Array(n); let i = 0;
  for (const c of chunks) for (const v of c) { const x = Math.max(-1, Math.min(1, v)); pcm[i++] = x < 0 ? x * 32768 : x * 32767; }
  chunks = []; const a = S.answers[cur]; status('saving...');
  try {
    const r = await api(`/api/recordings/${encodeURIComponent(a.answer_id)}?sample_rate_hz=${rate}`,
      {method: 'PUT', headers: {'Content-Type': 'application/octet-stream'}, body: pcm.buffer});
    a.recorded = {file: r.file, duration_s: r.duration_s, sample_rate_hz: r.sample_rate_hz};
    const clip = r.clipped_fraction > 0.001;
    status(`saved ${r.file}: ${r.duration_s} s, peak ${r.peak_dbfs} dBFS` + (clip ? ' - clipped: re-take a little softer' : '') + '. Listen, then Next or Re-take.', clip);
    render(); await loadPlayer();
  } catch (e) { status('not saved: ' + e.message, true); }
}
async function checkLevel() {
  if (mic) { await closeMic(); $('check').textContent = 'Check level'; return; }
  try { mic = await openMic(); $('check').textContent = 'Stop level check'; status('speak as you will when reading'); }
  catch (e) { status('microphone: ' + e.message, true); }
}

async function micForForm() {
  try { const m = await openMic(); $('device').value = $('device').value || m.label; $('rate').value = m.rate;
    m.stream.getTracks().forEach(t => t.stop()); await m.ctx.close(); $('micstate').textContent = 'microphone works: ' + (m.label || 'unnamed device');
    $('save').disabled = false;
  } catch (e) { $('micstate').textContent = 'microphone: ' + e.message; $('micstate').className = 'warn'; }
}
async function saveSpeaker() {
  try {
    S.speaker = await api('/api/speaker', {method: 'POST', headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({consent_text: S.consent_text, agreed: $('agree').checked,
        accent_description: $('accent').value, language_background: $('languages').value,
        device: $('device').value, notes: $('notes').value, sample_rate_hz: +$('rate').value || null})});
    show('record'); render();
  } catch (e) { $('micstate').textContent = 'not saved: ' + e.message; $('micstate').className = 'warn'; }
}

async function init() {
  S = await api('/api/session');
  $('consenttext').textContent = S.consent_text;
  const first = S.answers.findIndex(a => !a.recorded); cur = first < 0 ? 0 : first;
  progress();
  if (S.speaker) { show('record'); render(); await loadPlayer(); } else show('consent');
  $('agree').onchange = () => { $('continue').disabled = !$('agree').checked; };
  $('continue').onclick = () => show('about');
  $('micbtn').onclick = micForForm; $('save').onclick = saveSpeaker;
  $('rec').onclick = startRec; $('stop').onclick = stopRec; $('check').onclick = checkLevel;
  $('next').onclick = () => { if (recording) return; const k = S.answers.findIndex((a, i) => i > cur && !a.recorded);
    cur = k >= 0 ? k : Math.min(cur + 1, S.answers.length - 1); render(); loadPlayer(); };
  document.body.dataset.ready = '1';
}
init().catch(e => status('could not load the session: ' + e.message, true));
