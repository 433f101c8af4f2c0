import { describe, expect, it } from 'vitest';
import { googleSheetsConnector } from './index.js';
import { googleSheetsConfigSchema, resolveTabNames } from './schema.js';
import { tabColumns, toCell, valueAt } from './columns.js';

const base = { name: 'sheets', type: 'google-sheets', streams: ['students'], spreadsheetId: 'S', accessToken: 't' };

describe('googleSheetsConfigSchema', () => {
  it('fills defaults', () => {
    const config = googleSheetsConfigSchema.parse(base);
    expect(config).toMatchObject({ onDelete: 'remove', writesPerMinute: 50, batchSize: 500, tabs: {}, columns: {} });
    expect(googleSheetsConnector.batchSize?.(config)).toBe(500);
    expect(resolveTabNames(config.tabs).students).toBe('Students');
  });

  it.each([
    ['an unknown key', { ...base, spreadshetId: 'x' }],
    ['no credentials', { ...base, accessToken: undefined }],
    ['both credentials', { ...base, credentialsFile: '/k.json' }],
    ['two streams on one tab', { ...base, tabs: { students: 'People', users: 'people' } }],
    ['a reserved column title', { ...base, columns: { students: { 'user.login': 'ID' } } }],
    ['a duplicate column title', { ...base, columns: { students: { 'user.login': 'A', 'user.firstName': 'A' } } }],
    ['a bad path', { ...base, columns: { students: { 'user..x': 'A' } } }],
    ['writes above Google quota', { ...base, writesPerMinute: 1000 }],
  ])('rejects %s', (_, input) => {
    expect(googleSheetsConfigSchema.safeParse(input).success).toBe(false);
  });
});

describe('columns', () => {
  it('keeps RAW text as text and flattens objects to JSON', () => {
    expect(toCell('00123')).toBe('00123');
    expect(toCell('=1+1')).toBe('=1+1');
    expect(toCell(null)).toBe('');
    expect(toCell(7)).toBe(7);
    expect(toCell({ a: 1 })).toBe('{"a":1}');
    expect(toCell('x'.repeat(60_000))).toHaveLength(50_000);
  });

  it('reads dotted paths and the whole record', () => {
    expect(valueAt({ user: { a: { b: 2 } } }, 'user.a.b')).toBe(2);
    expect(valueAt({ user: null }, 'user.a')).toBeUndefined();
    expect(valueAt({ x: 1 }, '*')).toEqual({ x: 1 });
  });

  it('puts the id first and bookkeeping last, with status only when marking', () => {
    const titles = (onDelete: 'remove' | 'mark') => tabColumns('students', { 'user.login': 'Login' }, onDelete).map((c) => c.title);
    expect(titles('remove')).toEqual(['id', 'Login', 'changed at', 'record id']);
    expect(titles('mark')).toEqual(['id', 'Login', 'status', 'changed at', 'record id']);
    expect(tabColumns('invoices', undefined, 'mark').map((c) => c.title)).toContain('event');
  });
});
