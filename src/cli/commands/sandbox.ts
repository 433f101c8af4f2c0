import { InvalidArgumentError, Option, type Command } from 'commander';
import { createLogger } from '../../log.js';
import { listenError } from '../../server.js';
import { POLLED_STREAMS } from '../../streams/index.js';
import { createSandbox } from '../../../sandbox/index.js';
import { describeControlEndpoints } from '../../../sandbox/control-endpoints.js';

/**
 * `schoolbridge sandbox`: the simulated upstream (docs/upstream.md), standalone, until SIGINT/SIGTERM.
 * It needs no config file; its credentials come from options or SANDBOX_CLIENT_ID /
 * SANDBOX_CLIENT_SECRET (read through commander, the config module being the daemon's only env reader).
 */
interface SandboxCommandOptions {
  host: string;
  port: number;
  students: number;
  seed: number;
  activity: boolean;
  activityInterval: number;
  retryTimeScale: number;
  clientId: string;
  clientSecret: string;
  staticToken?: string;
}

const integer = (min: number, max = Number.MAX_SAFE_INTEGER) => (value: string): number => {
  const number = Number(value);
  if (!Number.isInteger(number) || number < min || number > max) {
    throw new InvalidArgumentError(max === Number.MAX_SAFE_INTEGER ? `expected an integer ≥ ${min}` : `expected an integer from ${min} to ${max}`);
  }
  return number;
};

const positive = (value: string): number => {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) throw new InvalidArgumentError('expected a number > 0');
  return number;
};

const HELP = `
Credentials:
  The client id and secret default to "sandbox-client" / "sandbox-secret". Set them with
  --client-id / --client-secret or the environment variables SANDBOX_CLIENT_ID / SANDBOX_CLIENT_SECRET
  (options win). The secret is also the key of the Webhook-Signature HMAC on every delivery, so give
  the bridge the same value as upstream.clientSecret.
  Get a token:  curl -u sandbox-client:sandbox-secret -d grant_type=client_credentials \\
                  http://127.0.0.1:8090/api/v2/authorize
  Tokens live 2592000 s; --static-token adds one fixed token that is always accepted.

API v2 (Authorization: Bearer <token>):
  ${POLLED_STREAMS.map((stream) => `GET ${stream.list.path}`).join(' · ')}
  GET /api/v2/student?id=N · POST /api/v2/student · PATCH /api/v2/student?id=N
  GET /api/v2/webhooks · POST /api/v2/webhook · DELETE /api/v2/webhook?id=N
  Write bodies: multipart or urlencoded form fields (firstname, lastname, email, schoolId; event, callbackUrl).

Webhook deliveries:
  JSON POST of {"event","object"} to each registration, header Webhook-Signature
  {"timestamp":<s>,"signature":hex HMAC-SHA256(secret, "<timestamp>;<body>")}, re-signed per attempt.
  Only 200 counts; otherwise retried after 30 s, doubling to 6 h, for up to 3 days (21 attempts).
  --retry-time-scale X multiplies every wait: 0.00001 runs the whole 3 days in about 3 s.

Control API (no auth; JSON bodies):
${describeControlEndpoints()}

Examples:
  schoolbridge sandbox --students 100000
  schoolbridge sandbox --activity --activity-interval 2000 --retry-time-scale 0.001
  curl -X POST -H 'content-type: application/json' -d '{"description":"demo"}' http://127.0.0.1:8090/_sandbox/invoices
  curl -X POST -H 'content-type: application/json' -d '{"kind":"status","status":503,"route":"GET /api/v2/students","times":3}' \\
       http://127.0.0.1:8090/_sandbox/faults
`;

export function registerSandboxCommand(program: Command): void {
  program
    .command('sandbox')
    .description('run the simulated upstream (API v2, webhook deliveries, control API under /_sandbox/)')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('-p, --port <port>', 'port to listen on', integer(0, 65535), 8090)
    .option('--students <n>', 'seeded students (each with a student user and a parent user)', integer(0), 50)
    .option('--seed <n>', 'data seed: the same seed gives the same school', integer(0), 1)
    .option('--activity', 'a living school: new students, edits, archivals and invoices over time (it stays about its seeded size)', false)
    .option('--activity-interval <ms>', 'time between two activity changes', integer(1), 5000)
    .option('--retry-time-scale <x>', 'multiplies the delivery back-off (1 = real, up to 3 days)', positive, 1)
    .addOption(new Option('--client-id <id>', 'OAuth client id').env('SANDBOX_CLIENT_ID').default('sandbox-client'))
    .addOption(new Option('--client-secret <secret>', 'OAuth client secret and webhook signing secret').env('SANDBOX_CLIENT_SECRET').default('sandbox-secret'))
    .option('--static-token <token>', 'an extra bearer token that is always accepted')
    .addHelpText('after', HELP)
    .action(async (options: SandboxCommandOptions) => {
      const log = createLogger({ level: 'info', pretty: process.stderr.isTTY === true });
      const sandbox = createSandbox({
        host: options.host, port: options.port, students: options.students, seed: options.seed,
        clientId: options.clientId, clientSecret: options.clientSecret, staticToken: options.staticToken,
        retryTimeScale: options.retryTimeScale, log: log.child({ component: 'sandbox' }),
        activity: options.activity ? { intervalMs: options.activityInterval } : false,
      });
      await sandbox.start().catch((error: unknown) => {
        throw listenError(error, { host: options.host, port: options.port }, { code: 'sandbox', port: '--port', host: '--host' });
      });
      process.stdout.write(`sandbox listening on ${sandbox.url} (${options.students} students, client id "${options.clientId}")\n`);
      await new Promise<void>((resolve) => {
        const onSignal = () => resolve();
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
      });
      await sandbox.stop();
      log.flush?.();
    });
}
