import type { FastifyReply } from 'fastify';

/** Small pieces of the console's server-rendered HTML. Everything shown goes through `escape`. */
export const escape = (value: unknown): string =>
  String(value ?? '—').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * A table on a wide screen, a card per row on a phone (the stylesheet turns rows into blocks below
 * 600 px and each cell shows its column's name from `data-label`). Cells are text, or `{ html }`
 * already escaped.
 */
export type Cell = string | number | undefined | { html: string };

const cell = (c: Cell) => (typeof c === 'object' && c !== null ? c.html : escape(c));

export function cardTable(head: readonly string[], rows: readonly Cell[][], empty: string, id?: string): string {
  if (rows.length === 0) return `<p class="muted"${id ? ` id="${id}"` : ''}>${escape(empty)}</p>`;
  const body = rows.map((r) => `<tr>${r.map((c, i) => `<td data-label="${escape(head[i] ?? '')}">${cell(c)}</td>`).join('')}</tr>`).join('');
  return `<table class="cards-table"${id ? ` id="${id}"` : ''}><thead><tr>${head.map((h) => `<th>${escape(h)}</th>`).join('')}</tr></thead><tbody>${body}</tbody></table>`;
}

/** A button that runs an admin action: POST `path` with `body`, the token from the tab's session. */
export const actionButton = (label: string, path: string, body: unknown, confirm?: string): string =>
  `<button type="button" class="action" data-path="${escape(path)}" data-body="${escape(JSON.stringify(body))}"${confirm ? ` data-confirm="${escape(confirm)}"` : ''}>${escape(label)}</button>`;

/** The stylesheet of the page's tables and cards; phone layout below 600 px. */
export const TABLE_CSS = `
table{border-collapse:collapse;width:100%;background:#fff;font-size:.9rem}
th,td{border-bottom:1px solid #e3e6eb;padding:4px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
@media (max-width:600px){
table,thead,tbody,tr,td{display:block;width:auto}thead{display:none}
tr{background:#fff;border:1px solid #e3e6eb;border-radius:8px;margin:0 0 8px;padding:6px 8px}
td{border:0;padding:2px 0}td::before{content:attr(data-label) ": ";color:#6b7280}
}`;

/**
 * Sends a page of ours: never cached (it holds live figures), never shown inside another site's
 * frame (its buttons act with the admin token), and never read as another type than HTML.
 */
export function sendPage(reply: FastifyReply, html: string): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header('content-security-policy', "frame-ancestors 'none'")
    .header('x-content-type-options', 'nosniff')
    .send(html);
}
