import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { tokenMatches, type AdminReply } from '../http/admin-routes.js';
import { sendPage } from './html.js';
import { problems } from './problems.js';
import { findRecords } from './records.js';
import { renderProblems } from './render-problems.js';
import { renderRecords } from './render-records.js';
import { renderRuns } from './render-runs.js';
import { runsView } from './runs.js';
import { renderShell } from './shell.js';
import type { ConsoleSources, Viewer } from './sources.js';

export interface ConsoleOptions {
  adminToken: string | undefined;
  /** server.consolePublic: the console without the token (error texts still need it). */
  consolePublic: boolean;
  /**
   * An answer that refuses the runs and a search now, before they read (a store that answers
   * nothing: 503), as the admin API's; the problems then say why without reading (sources.notAnswering).
   */
  refuse?: () => AdminReply | undefined;
}

/**
 * The operator console's routes: JSON for scripts (`/api/problems`, `/api/runs`,
 * `/api/records?query=`) and the same as HTML sections for the page (`/console/<section>`). Unless
 * the console is public they need `Authorization: Bearer <server.adminToken>`, and say so (401)
 * otherwise. Returns what `GET /` embeds.
 */
export function registerConsoleRoutes(http: FastifyInstance, sources: ConsoleSources, options: ConsoleOptions): { shell(): Promise<string> } {
  const viewerOf = (request: FastifyRequest): Viewer => ({ authed: options.adminToken !== undefined && tokenMatches(request.headers.authorization, options.adminToken) });
  const deny = (reply: FastifyReply, viewer: Viewer) => {
    if (options.consolePublic || viewer.authed) return false;
    void reply.code(401).header('www-authenticate', 'Bearer').header('cache-control', 'no-store').send({
      error: 'unauthorized',
      message: options.adminToken
        ? 'the console needs Authorization: Bearer <server.adminToken> (or server.consolePublic: true)'
        : 'the console needs server.adminToken, which is not set (or server.consolePublic: true)',
    });
    return true;
  };
  /** Whether the section was refused at once (sent 503 with Retry-After), as an admin action is. */
  const refused = (reply: FastifyReply) => {
    const refusal = options.refuse?.();
    if (!refusal) return false;
    void reply.code(refusal.status).header('retry-after', '5').header('cache-control', 'no-store').send(refusal.body);
    return true;
  };
  const actions = options.adminToken !== undefined;
  const tz = sources.timezone;
  const sections = {
    problems: async (_q: string, v: Viewer) => ({ json: await problems(sources, v), html: (p: Awaited<ReturnType<typeof problems>>) => renderProblems(p, tz, actions) }),
    runs: async () => ({ json: await runsView(sources), html: (r: Awaited<ReturnType<typeof runsView>>) => renderRuns(r, tz) }),
    records: async (q: string, v: Viewer) => ({ json: await findRecords(sources, q, v), html: (r: Awaited<ReturnType<typeof findRecords>>) => renderRecords(r, tz, actions) }),
  } as const;

  /** The sections that read the store whatever happens; problems reads nothing from one that does not answer. */
  const reads: Record<keyof typeof sections, boolean> = { problems: false, runs: true, records: true };
  for (const [name, build] of Object.entries(sections)) {
    const refusable = reads[name as keyof typeof sections];
    // `?query=a&query=b` comes as an array: the first is the search, not "a,b".
    const query = (request: FastifyRequest) => {
      const given = (request.query as Record<string, unknown>).query;
      return String((Array.isArray(given) ? given[0] : given) ?? '');
    };
    http.get(`/api/${name}`, async (request, reply) => {
      const viewer = viewerOf(request);
      if (deny(reply, viewer) || (refusable && refused(reply))) return reply;
      const { json } = await build(query(request), viewer);
      return reply.header('cache-control', 'no-store').send(json);
    });
    http.get(`/console/${name}`, async (request, reply) => {
      const viewer = viewerOf(request);
      if (deny(reply, viewer) || (refusable && refused(reply))) return reply;
      const { json, html } = await build(query(request), viewer);
      return sendPage(reply, (html as (v: typeof json) => string)(json));
    });
  }

  return {
    async shell() {
      // Refused, the page's script loads the sections and says why.
      if (!options.consolePublic || options.refuse?.()) return renderShell({ actions });
      const viewer = { authed: false };
      const [p, r] = await Promise.all([problems(sources, viewer), runsView(sources)]);
      return renderShell({ actions, rendered: { problems: renderProblems(p, tz, actions), runs: renderRuns(r, tz) } });
    },
  };
}
