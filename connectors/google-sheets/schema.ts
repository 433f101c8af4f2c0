import { z } from 'zod';
import { connectorBaseSchema } from '../../src/connectors/base-schema.js';
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

const perStream = <T extends z.ZodType>(value: T) =>
  z.strictObject({
    students: value.optional(),
    users: value.optional(),
    invoices: value.optional(),
    events: value.optional(),
    roster: value.optional(),
  });

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
    timeoutMs: z.number().int().min(1000).default(60_000),
  })
  .superRefine((config, ctx) => {
    if (!config.credentialsFile === !config.accessToken) {
      ctx.addIssue({
        code: 'custom',
        path: ['credentialsFile'],
        message: 'set exactly one of credentialsFile (service-account key; or GOOGLE_APPLICATION_CREDENTIALS) and accessToken',
      });
    }
    const names = Object.values(resolveTabNames(config.tabs)).map((n) => n.toLowerCase());
    if (new Set(names).size !== names.length) ctx.addIssue({ code: 'custom', path: ['tabs'], message: 'two streams use the same tab name' });
  });

export type GoogleSheetsConfig = z.infer<typeof googleSheetsConfigSchema>;

export const DEFAULT_TABS = { students: 'Students', users: 'Users', invoices: 'Invoices', events: 'Events', roster: 'Roster' } as const;

export type SheetStream = keyof typeof DEFAULT_TABS;

export function resolveTabNames(tabs: Partial<Record<SheetStream, string | undefined>>): Record<SheetStream, string> {
  return {
    students: tabs.students ?? DEFAULT_TABS.students,
    users: tabs.users ?? DEFAULT_TABS.users,
    invoices: tabs.invoices ?? DEFAULT_TABS.invoices,
    events: tabs.events ?? DEFAULT_TABS.events,
    roster: tabs.roster ?? DEFAULT_TABS.roster,
  };
}
