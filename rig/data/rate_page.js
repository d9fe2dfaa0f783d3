// rig ratings collect: the rating page's script (rig/ratings/collect_page.py inlines it).
// Blind: the server names an item by its position in the sample only.
const TOKEN = document.body.dataset.token;
const H = {'X-Rig-Token': TOKEN};
const $ = id => document.getElementById(id);
let rater = null, item = null, audioUrl = null;

async function api(path, opts = {}) {
  const r = await fetch(path, {...opts, headers: {...H, ...(opts.headers || {})}});
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.detail ? (typeof body.detail === 'string' ? body.detail : JSON.stringify(body.detail)) : r.status);
  return body;
}
function status(msg, warn) { const s = $('status'); s.textContent = msg; s.className = warn ? 'warn' : ''; }
function show(step) { for (const id of ['who', 'rate', 'done']) $(id).classList.toggle('hidden', id !== step); }

function complete() {
  if ($('cnh').checked) return true;
  return item.criteria.every(c => document.querySelector(`input[name="lv-${c.id}"]:checked`));
}
function refreshSubmit() { $('submit').disabled = !item || !complete(); }

async function loadAudio(position) {
  const pl = $('player'); pl.removeAttribute('src'); delete pl.dataset.loaded;
  if (audioUrl) { URL.revokeObjectURL(audioUrl); audioUrl = null; }
  const r = await fetch(`/api/audio/${position}`, {headers: H, cache: 'no-store'});
  if (!r.ok) { status(`the audio cannot be loaded (${r.status})`, true); return; }
  audioUrl = URL.createObjectURL(await r.blob());
  pl.src = audioUrl; pl.dataset.loaded = String(position);
}

function render(data) {
  const p = data.progress;
  $('count').textContent = `${p.n_rated_by_rater} rated by you, ${p.n_left_for_rater} left for you`;
  $('bar').max = p.n_ratings_needed; $('bar').value = p.n_ratings_done;
  item = data.item;
  if (!item) { show('done'); $('donemsg').textContent = `Nothing left for ${rater}: thank you. ${p.n_rated_by_rater} call(s) rated.`; return; }
  show('rate');
  $('pos').textContent = `Call ${item.position}`;
  $('question').textContent = item.question;
  const form = $('criteria'); form.textContent = '';
  for (const c of item.criteria) {
    const fs = document.createElement('fieldset'); fs.dataset.criterion = c.id;
    const lg = document.createElement('legend'); lg.textContent = `${c.id} (${c.points} points)`; fs.appendChild(lg);
    const d = document.createElement('p'); d.className = 'desc'; d.textContent = c.description; fs.appendChild(d);
    item.levels.forEach((anchor, lv) => {
      const lab = document.createElement('label'); lab.className = 'level';
      const inp = document.createElement('input'); inp.type = 'radio'; inp.name = `lv-${c.id}`;
      inp.value = String(lv); inp.id = `lv-${c.id}-${lv}`; inp.onchange = refreshSubmit;
      lab.appendChild(inp); lab.appendChild(document.createTextNode(' ' + anchor));
      fs.appendChild(lab);
    });
    form.appendChild(fs);
  }
  $('cnh').checked = false; refreshSubmit();
  loadAudio(item.position);
  document.body.dataset.position = String(item.position);
}

async function next() { render(await api(`/api/next?rater=${encodeURIComponent(rater)}`)); }

async function submit() {
  $('submit').disabled = true;
  const cnh = $('cnh').checked, levels = {};
  let all = true;
  for (const c of item.criteria) {
    const el = document.querySelector(`input[name="lv-${c.id}"]:checked`);
    if (el) levels[c.id] = Number(el.value); else all = false;
  }
  const body = {rater, position: item.position, could_not_hear: cnh, levels: all ? levels : null};
  try {
    const r = await api('/api/ratings', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)});
    status(`saved call ${r.position}` + (cnh ? ' (could not hear)' : ''));
    await next();
  } catch (e) { status(`not saved: ${e.message}`, true); refreshSubmit(); }
}

async function start() {
  const v = $('rater').value.trim();
  if (!/^[A-Za-z0-9_.@-]{1,64}$/.test(v)) { status('a rater id is letters, digits, _ . @ or -', true); return; }
  rater = v; try { localStorage.setItem('rig-rater', v); } catch (e) {}
  $('whoami').textContent = `rater ${rater}`;
  try { await next(); status(''); } catch (e) { status(`cannot start: ${e.message}`, true); }
}

$('start').onclick = start;
$('submit').onclick = submit;
$('cnh').onchange = refreshSubmit;
$('switch').onclick = () => { rater = null; item = null; $('whoami').textContent = ''; show('who'); };
try { $('rater').value = localStorage.getItem('rig-rater') || ''; } catch (e) {}
show('who');
document.body.dataset.ready = '1';
