export { SIGNATURE_HEADER, computeSignature, signatureHeader } from './sign.js';
export { MILLISECONDS_THRESHOLD, parseSignatureHeader, verifySignature, type SignatureHeader, type VerifyFailure, type VerifyResult } from './verify.js';
