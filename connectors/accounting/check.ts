import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import type { CheckResult, ConnectorContext } from '../../src/connectors/types.js';
import { describeError } from '../../src/errors.js';
import { makeDir, takenByFile } from '../../src/files/make-dir.js';
import { inTrouble, originOf, probe } from '../../src/http/probe.js';
import type { AccountingConfig } from './schema.js';

/**
 * Where a delivery leaves why the ledger could not be written (in the connector's cache), until a
 * row is written again: a directory that is writable can still be full, or hold a file in the way.
 */
export const LEDGER_PROBLEM = 'accounting.ledgerProblem';

/**
 * Readiness of the accounting connector (shown in /readyz; must not throw): the ledger directory is
 * writable and its last append did not fail, and the feed URL answers a HEAD with the configured headers. Any answer below 500 counts
 * as reachable (many POST endpoints answer HEAD with 404 or 405) except 401/403, which say the
 * configured credentials are refused. Nothing is POSTed, so a check never creates an invoice.
 */
export async function checkAccounting(ctx: ConnectorContext<AccountingConfig>): Promise<CheckResult> {
  const { ledgerDir, url, headers, timeoutMs } = ctx.config;
  if (ledgerDir) {
    try {
      await makeDir(ledgerDir);
      await access(ledgerDir, constants.W_OK);
    } catch (error) {
      if (takenByFile(error)) return { ok: false, reason: `cannot make the ledger directory ${ledgerDir}: a file takes its path; set this connector's ledgerDir to a directory` };
      return { ok: false, reason: `ledger directory ${ledgerDir} is not writable: ${describeError(error)}; fix its permissions or this connector's ledgerDir` };
    }
    const problem = ctx.cache.get(LEDGER_PROBLEM);
    if (typeof problem === 'string') return { ok: false, reason: `the ledger in ${ledgerDir} could not be written: ${problem}; deliveries wait until it can (free space on its disk?)` };
  }
  const origin = originOf(url);
  const answer = await probe(url, { headers, dispatcher: ctx.dispatcher, signal: ctx.signal, timeoutMs });
  if (!answer.ok) return answer;
  const { status } = answer;
  if (status === 401 || status === 403) return { ok: false, reason: `${origin} refuses the configured credentials (${status})` };
  if (inTrouble(status)) return { ok: false, reason: `${origin} answers ${status}` };
  return { ok: true };
}
