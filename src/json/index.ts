export { scanJson, stringOf, type Scan, type ScannedMember, type ScannedValue, type ScanOptions } from './canonical-scan.js';
export { JsonSyntaxError } from './cursor.js';
export { JsonNumber, numberOf } from './json-number.js';
export { memberText } from './member-text.js';
export { hasUnusualNumber, parseExact } from './parse-exact.js';
export { RawJson } from './raw-json.js';
export { stringifyExact } from './stringify-exact.js';
