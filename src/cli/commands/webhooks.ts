import type { Command } from 'commander';
import { printable } from '../../outbox/index.js';
import { BridgeError } from '../../errors.js';
import type { Webhook } from '../../upstream/index.js';
import { isMarkedDeleted, notDeletedAnswer, sameUrl, type ReconcileResult } from '../../webhooks/index.js';
import { CliExit } from '../errors.js';
import { withUpstream, type UpstreamContext } from '../upstream-context.js';

/**
 * `schoolbridge webhooks list | reconcile [--dry-run] | delete <id>` (README, "Commands"): our
 * registrations at the upstream. They talk to the upstream (and on PostgreSQL to the store, which
 * replicas share), never to a daemon, so they run beside one.
 */
export function registerWebhooksCommand(program: Command): void {
  const webhooks = program.command('webhooks').description('inspect, converge or remove the upstream webhook registrations');

  webhooks
    .command('list')
    .description('list the upstream registrations; ours (callbackUrl = server.publicUrl + /webhooks/v2) are marked')
    .option('--json', 'print JSON')
    .action((options: { json?: boolean }, command: Command) =>
      upstreamOnly(command, async (app) => {
        const list = await app.upstream.listWebhooks();
        // `ours` as the text marks them: the callback URL is this daemon's.
        if (options.json) return print(JSON.stringify(list.map((w) => ({ ...w, ours: sameUrl(w.callbackUrl, app.callbackUrl()) })), null, 2));
        print(list.length === 0 ? 'no registrations' : list.map((w) => describeHook(w, app.callbackUrl())).join('\n'));
      }),
    );

  webhooks
    .command('reconcile')
    .description('keep exactly one registration of ours per configured event (webhooks.events), delete our duplicates, and with webhooks.prune ours for unlisted events; other URLs are never touched')
    .option('--dry-run', 'print the plan, change nothing')
    .option('--json', 'print JSON')
    .action((options: { dryRun?: boolean; json?: boolean }, command: Command) =>
      upstreamOnly(command, async (app) => {
        const result = await reconcileInTurn(app, options.dryRun === true);
        print(options.json ? JSON.stringify(result, null, 2) : describeResult(result, app.callbackUrl()));
      }),
    );

  webhooks
    .command('delete <id>')
    .description('delete one upstream registration by id (see `webhooks list`)')
    .action((id: string, _options: unknown, command: Command) =>
      upstreamOnly(command, async (app) => {
        const webhookId = positiveInteger(id);
        try {
          const answer = await app.upstream.deleteWebhook(webhookId);
          if (answer.isDeleted === false) throw new CliExit(1, notDeletedAnswer(webhookId).message);
          // An answer of "deleted" is believed once the list agrees (webhooks/reconcile.ts, confirmGone).
          const still = (await app.upstream.listWebhooks()).some((w) => w.id === webhookId && !isMarkedDeleted(w));
          if (still) throw new CliExit(1, `the upstream answered that it deleted registration ${webhookId} but still lists it`);
        } catch (error) {
          if (error instanceof BridgeError && error.code === 'upstream.not_found') throw new CliExit(1, `no webhook registration ${webhookId} (see \`schoolbridge webhooks list\`)`);
          throw error;
        }
        print(`deleted registration ${webhookId}`);
      }),
    );
}

/** How long `webhooks reconcile` waits for a replica's reconcile to end before it gives up. */
const TURN_WAIT_MS = 15_000;

/** A reconcile waits its turn while a replica reconciles (PostgreSQL), then runs; past the wait it says why it stops. */
async function reconcileInTurn(app: UpstreamContext, dryRun: boolean): Promise<ReconcileResult> {
  const deadline = Date.now() + TURN_WAIT_MS;
  for (;;) {
    try {
      return await app.reconciler.reconcile({ dryRun });
    } catch (error) {
      if (!(error instanceof BridgeError && error.code === 'webhooks.busy')) throw error;
      if (Date.now() >= deadline) throw new CliExit(1, `${error.message} (waited ${TURN_WAIT_MS / 1000} s)`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** No daemon is asked: a running one is no obstacle. */
function upstreamOnly(command: Command, work: (app: UpstreamContext) => Promise<void>): Promise<void> {
  return withUpstream(command, work);
}

function positiveInteger(text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value <= 0) throw new CliExit(1, `"${text}" is not a registration id (a positive integer; see \`schoolbridge webhooks list\`)`);
  return value;
}

export function describeHook(webhook: Webhook, ours: string): string {
  const mark = sameUrl(webhook.callbackUrl, ours) ? 'ours   ' : 'foreign';
  // The upstream's text, shown with its control characters as escapes: none reaches the terminal.
  return `${String(webhook.id).padStart(6)}  ${mark}  ${printable(webhook.event).padEnd(24)}  ${printable(webhook.callbackUrl)}`;
}

export function describeResult(result: ReconcileResult, callbackUrl: string): string {
  const { plan } = result;
  const lines = [`callback URL: ${callbackUrl}`];
  for (const webhook of plan.keep) lines.push(`keep    #${webhook.id} ${printable(webhook.event)}`);
  for (const event of plan.create) {
    const created = result.created.find((w) => w.event === event);
    lines.push(`create  ${created ? `#${created.id} ` : ''}${event}`);
  }
  for (const { webhook, why } of plan.delete) lines.push(`delete  #${webhook.id} ${printable(webhook.event)} (${why === 'duplicate' ? 'duplicate of ours' : 'event not configured'})`);
  if (plan.foreign > 0) lines.push(`left alone: ${plan.foreign} registration(s) of other callback URLs`);
  const changes = plan.create.length + plan.delete.length;
  lines.push(result.dryRun ? `dry run: ${changes} change(s) planned, nothing done` : changes === 0 ? 'already converged: nothing to do' : `done: ${result.created.length} created, ${result.deleted.length} deleted`);
  return lines.join('\n');
}

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}
