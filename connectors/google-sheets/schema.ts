import { z } from 'zod';
import { connectorBaseSchema } from '../../src/connectors/base-schema.js';
import { millis } from '../../src/config/fields.js';
import { STREAMS, type Stream } from '../../src/records.js';
import { POLLED_STREAMS } from '../../src/streams/index.js';
import { RESERVED_TITLES } from './columns.js';

/** Sheets allows 100 characters in a tab name. */
const tabName = z.string().trim().min(1).max(100);

/** `{ "user.firstName": "First name" }`: a dotted path into the record → the column title. `*` is the whole record as JSON. */
const columnMap = z
  .record(z.string().regex(/^(\*|[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*)$/, 'a dotted field path such as user.firstName, or *'), z.string().trim().min(1).max(200))
  .refine((map) => Object.keys(map).length > 0, 'list at least one column')
  .superRefine((map, ctx) => {
    const seen = new Set<string>();
    for (const title of Object.values(map)) {
      const key = title.toLowerCase();
      if (RESERVED_TITLES.includes(key)) ctx.addIssue({ code: 'custom', message: `column title "${title}" is reserved for the connector's own columns` });
      if (seen.has(key)) ctx.addIssue({ code: 'custom', message: `column title "${title}" is used twice` });
      seen.add(key);
    }
  });

/** An optional value per stream, every stream's name a key (a misspelled one is an error). */
const perStream = <T extends z.ZodType>(value: T) =>
  z.strictObject(Object.fromEntries(STREAMS.map((stream) => [stream, value.optional()])) as Record<Stream, z.ZodOptional<T>>);

export const googleSheetsConfigSchema = connectorBaseSchema
  .extend({
    type: z.literal('google-sheets'),
    spreadsheetId: z.string().trim().min(1, 'the id from the spreadsheet URL, /d/<id>/edit'),
    /** A service-account JSON key (also filled from GOOGLE_APPLICATION_CREDENTIALS by the config module). */
    credentialsFile: z.string().min(1).optional(),
    /** A ready OAuth access token with the spreadsheets scope (short-lived; for tests and proxies). */
    accessToken: z.string().min(1).optional(),
    /** API base URL; only its origin is used (the client always requests /v4/...). */
    rootUrl: z.url({ protocol: /^https?$/ }).optional(),
    tabs: perStream(tabName).default({}),
    columns: perStream(columnMap).default({}),
    onDelete: z.enum(['remove', 'mark']).default('remove'),
    /** Google allows 60 per minute per user; stay below so other tools sharing the account still work. */
    writesPerMinute: z.number().int().min(1).max(300).default(50),
    readsPerMinute: z.number().int().min(1).max(300).default(50),
    batchSize: z.number().int().min(1).max(5000).default(500),
    /** Cells per roster write request; with the byte cap below it keeps requests near Google's 2 MB advice. */
    chunkCells: z.number().int().min(100).max(1_000_000).default(100_000),
    timeoutMs: millis(1000).default(60_000),
  })
  .superRefine((config, ctx) => {
    if (!config.credentialsFile === !config.accessToken) {
      ctx.addIssue({
        code: 'custom',
        path: ['credentialsFile'],
        message: 'set exactly one of credentialsFile (service-account key; or GOOGLE_APPLICATION_CREDENTIALS) and accessToken',
      });
    }
    // Among the streams it takes or names a tab for: a stream added later, with a default tab name a
    // config already gives another stream, does not make that config invalid.
    const tabs = resolveTabNames(config.tabs);
    const named = STREAMS.filter((stream) => config.streams.includes(stream) || config.tabs[stream] !== undefined);
    const names = named.map((stream) => tabs[stream].toLowerCase());
    if (new Set(names).size !== names.length) ctx.addIssue({ code: 'custom', path: ['tabs'], message: 'two streams use the same tab name' });
  });

export type GoogleSheetsConfig = z.infer<typeof googleSheetsConfigSchema>;

/** A polled stream's tab is named in its description (src/streams/). */
export const DEFAULT_TABS: Readonly<Record<Stream, string>> = {
  ...(Object.fromEntries(POLLED_STREAMS.map((stream) => [stream.name, stream.sheets.tab])) as Record<(typeof POLLED_STREAMS)[number]['name'], string>),
  invoices: 'Invoices', events: 'Events', roster: 'Roster',
};

export type SheetStream = Stream;

export function resolveTabNames(tabs: Partial<Record<SheetStream, string | undefined>>): Record<SheetStream, string> {
  return Object.fromEntries(STREAMS.map((stream) => [stream, tabs[stream] ?? DEFAULT_TABS[stream]])) as Record<SheetStream, string>;
}
