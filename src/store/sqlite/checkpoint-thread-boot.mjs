// Entry of the checkpointer thread (checkpoint-thread.ts), which registers the tsx loader itself as
// db-thread-boot.mjs does.
import { register } from 'tsx/esm/api';

register();
await import('./checkpoint-thread.ts');
