export { SIGNATURE_HEADER, computeSignature, signatureHeader } from './sign.js';
export { verifySignature, type VerifyFailure, type VerifyResult } from './verify.js';
