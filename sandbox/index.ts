export { createSandbox } from './sandbox.js';
export { parseMultipart } from './form.js';
export { deliverySchedule } from './backoff.js';
export type * from './types.js';
export type { SandboxDocument } from './document.js';
