// Entry of the SQLite database thread (db-thread.ts): a worker thread starts without the tsx loader
// the daemon runs under (bin/schoolbridge.js), so it registers it itself.
import { register } from 'tsx/esm/api';

register();
await import('./db-thread.ts');
