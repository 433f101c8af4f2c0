export { startFakeSheets, type FakeSheets, type FakeSheetsOptions, type FakeCall } from './server.js';
export { SHEETS_SCOPE, type ServiceAccount } from './auth.js';
export type { Cell } from './grid.js';
