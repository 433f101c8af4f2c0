// Entry of the SQLite database thread (db-thread.ts): a worker thread starts without the daemon's
// way of running TypeScript, so it takes it up itself (src/load-typescript.mjs).
import { loadTypeScript } from '../../load-typescript.mjs';

await loadTypeScript(new URL('./db-thread.ts', import.meta.url));
