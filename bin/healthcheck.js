#!/usr/bin/env node
// The image's HEALTHCHECK: GET /healthz of the daemon in this container; exit 0 on 200, else 1 with
// the reasons on stdout (`docker inspect` shows them). It runs every 30 s, so it is plain JavaScript
// without the tsx loader and the config module: the port is the one the shipped configs read,
// SCHOOLBRIDGE_PORT, else 8080 (a mounted config with another fixed port sets SCHOOLBRIDGE_PORT too).
const port = process.env.SCHOOLBRIDGE_PORT || '8080';
try {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(4000) });
  const body = await response.text();
  process.stdout.write(`${response.status} ${body}\n`);
  process.exitCode = response.status === 200 ? 0 : 1;
} catch (error) {
  process.stdout.write(`no answer on port ${port}: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
