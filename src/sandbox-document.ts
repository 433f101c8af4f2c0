import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Adapter } from 'lowdb';
import { JSONFile } from 'lowdb/node';
import type { SandboxDocument } from '../sandbox/index.js';
import { BridgeError } from './errors.js';

/**
 * The embedded sandbox's school as a file (sandbox/document.ts). A file that is not one whole JSON
 * document (cut short, or written by two processes at once: their writes share one temporary file)
 * stops the start with its name and what to do, not with the parser's bare "Unexpected end of JSON
 * input"; it is never overwritten, so nothing in it is lost before someone looked.
 */
export function sandboxDocument(file: string): Adapter<SandboxDocument> {
  const inner = new JSONFile<SandboxDocument>(file);
  return {
    async read() {
      try {
        const document = await inner.read();
        // lowdb reads a missing file as null, and a file holding `null` too: that one is not a school.
        if (document === null && existsSync(file)) throw new Error('it holds null, not a saved school');
        return document;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new BridgeError('sandbox.document_unreadable', `cannot read the sandbox's school from ${file} (${reason}); move the file away to start a new school`, { cause: error });
      }
    },
    async write(document) {
      try {
        await inner.write(document);
      } catch (error) {
        // lowdb writes a whole temporary file first: one a full disk cut short would stay beside the
        // document, megabytes that keep the disk full (the store's with it), until the next write.
        await rm(path.join(path.dirname(file), `.${path.basename(file)}.tmp`), { force: true }).catch(() => {});
        throw error;
      }
    },
  };
}
