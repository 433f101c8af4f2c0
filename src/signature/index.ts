export { SIGNATURE_HEADER, computeSignature, signatureHeader } from './sign.js';
export { parseSignatureHeader, verifySignature, type SignatureHeader, type VerifyFailure, type VerifyResult } from './verify.js';
