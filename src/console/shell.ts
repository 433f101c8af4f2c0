import { actionButton, escape } from './html.js';

/**
 * The console's part of `GET /`: problems first, then the search and a record's trail, then runs.
 * The sections come rendered when the console is public; otherwise the script asks for the admin
 * token once, keeps it in the tab's sessionStorage and loads each section as HTML from
 * `/console/<section>` with `Authorization: Bearer` (never a cookie, so no request forgery).
 * Actions are POSTs to /admin/* the same way.
 */
export interface ShellOptions {
  /** Sections rendered for anyone (server.consolePublic), or undefined: loaded with the token. */
  rendered?: { problems: string; runs: string };
  /** Whether server.adminToken is set: actions and the token form exist. */
  actions: boolean;
}

const SCRIPT = `(() => {
const KEY = 'schoolbridge.adminToken';
const $ = (s) => document.querySelector(s);
const token = () => sessionStorage.getItem(KEY) || '';
const auth = () => (token() ? { authorization: 'Bearer ' + token() } : {});
const say = (text) => { $('#console-message').textContent = text; };
const form = $('#token-form');
let refused = false;
async function load(name, query) {
  const el = $('#console-' + name);
  const r = await fetch('/console/' + name + (query ? '?query=' + encodeURIComponent(query) : ''), { headers: auth(), cache: 'no-store' }).catch(() => undefined);
  if (!r) { say('The daemon did not answer.'); return false; }
  if (r.status === 401) {
    if (form) form.hidden = false;
    say(token() ? 'That token is wrong: nothing is shown and nothing was changed. Enter the admin token again.' : (form ? 'Enter the admin token to see the console.' : 'The console needs server.adminToken, which is not set.'));
    return false;
  }
  if (!r.ok) {
    const why = await r.json().then((b) => b.message, () => undefined);
    say('Could not load ' + name + (why ? ': ' + why : ' (HTTP ' + r.status + ')') + '.');
    return false;
  }
  el.innerHTML = await r.text();
  return true;
}
async function refresh() {
  if (!(await load('problems'))) return;
  if (form && token() && !refused) form.hidden = true;
  await load('runs');
  const q = $('#search').value.trim();
  if (q) await load('records', q);
}
const done = (b) => b.retried ? 'Retried ' + b.retried.length + '.' + (b.failed && b.failed.length ? ' Not delivered: ' + b.failed.length + ' (see the problems).' : '') : b.outcome ? 'Done: ' + b.outcome + (b.message ? ' — ' + b.message : '') + '.' : b.status ? 'Done: ' + b.status + '.' : 'Done.';
form && form.addEventListener('submit', (e) => { e.preventDefault(); sessionStorage.setItem(KEY, $('#token').value.trim()); $('#token').value = ''; refused = false; say(''); void refresh(); });
$('#search-form').addEventListener('submit', (e) => { e.preventDefault(); void load('records', $('#search').value.trim()); });
document.addEventListener('click', async (e) => {
  const b = e.target.closest && e.target.closest('button.action');
  if (!b) return;
  if (!token()) { if (form) form.hidden = false; say('Enter the admin token first: actions need it.'); return; }
  b.disabled = true;
  say('Working…');
  const r = await fetch(b.dataset.path, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: b.dataset.body }).catch(() => undefined);
  const body = r ? await r.json().catch(() => ({})) : {};
  if (r && r.status === 401 && form) { refused = true; form.hidden = false; }
  say(!r ? 'The daemon did not answer.' : r.status === 401 ? 'Wrong token: nothing was changed. Enter the admin token again.' : r.ok ? done(body) : 'Not done: ' + (body.message || body.error || 'HTTP ' + r.status));
  b.disabled = false;
  await refresh();
});
setInterval(() => { if (document.visibilityState === 'visible') void load('problems'); }, 15000);
void refresh();
})();`;

export function renderShell(options: ShellOptions): string {
  const tokenForm = options.actions
    ? `<form id="token-form" class="row"${options.rendered ? ' hidden' : ''}><label for="token">Admin token</label> <input id="token" type="password" autocomplete="off" placeholder="server.adminToken"> <button type="submit">Use</button></form>`
    : `<p class="muted" id="actions-off">Read-only: actions (retry, sync now, release) need <code>server.adminToken</code> in the config${options.rendered ? '' : ', and so does this console while <code>server.consolePublic</code> is false'}.</p>`;
  const actions = options.actions
    ? `<p class="row">${actionButton('Sync now', '/admin/sync', {})} ${actionButton('Export roster now', '/admin/export', {})}</p>`
    : '';
  return `<section id="console">
<h2>Console</h2>
${tokenForm}
<p id="console-message" role="status"></p>
${actions}
<h2>Problems</h2><div id="console-problems">${options.rendered?.problems ?? ''}</div>
<h2>Find a record</h2>
<form id="search-form" class="row"><input id="search" type="search" placeholder="name, e-mail, student or user id, invoice number, record id" aria-label="search"> <button type="submit">Find</button></form>
<div id="console-records"></div>
<h2>Runs</h2><div id="console-runs">${options.rendered?.runs ?? ''}</div>
</section>
<script>${SCRIPT}</script>`;
}

export const SHELL_CSS = `
[hidden]{display:none!important}.row{display:flex;flex-wrap:wrap;gap:6px;align-items:center}
input[type=search],input[type=password]{flex:1 1 12rem;min-width:0;padding:6px;font:inherit}
button{font:inherit;padding:5px 10px;border-radius:6px;border:1px solid #9aa3b2;background:#fff;cursor:pointer}
.panel{background:#fff;border:1px solid #e3e6eb;border-radius:8px;padding:8px 10px}.subject{margin:8px 0}.trail{border-top:1px solid #e3e6eb;margin-top:6px;padding-top:4px}
.state-done{color:#1f8a4c}.state-dead{color:#c0392b}.state-retrying{color:#b7791f}
h3{font-size:.98rem;margin:.9rem 0 .3rem}small{overflow-wrap:anywhere}
#console-message:empty{display:none}#console-message{background:#fff6d6;padding:4px 8px;border-radius:6px}
`;
export { escape };
