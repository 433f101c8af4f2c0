// Entry of the list worker thread (worker.ts). The daemon runs TypeScript through tsx's loader
// (bin/schoolbridge.js); a worker thread starts without it, so it registers the loader itself.
import { register } from 'tsx/esm/api';

register();
await import('./worker-thread.ts');
