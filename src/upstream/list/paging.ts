import { BridgeError } from '../../errors.js';

/**
 * Signs in a list answer that it is one page of a longer list. API v2 shows no pagination: a list
 * call answers the whole list. An answer that says otherwise beside the list (a `next` link, more
 * pages, a total above what it holds) must not be taken for the whole list: the poll would diff the
 * people on later pages as deleted. Only evidence of more counts: a `next` of null, `has_more:
 * false` or `last_page: 1` is a whole list that merely speaks of pages. A full page (as many items
 * as its `per_page`) counts as evidence unless a total says the list is all there is; counts may
 * come as numbers or as their text. The response's own headers are read apart (headers.ts).
 */

/** A link or token to the next page: present unless empty. */
const NEXT = new Set(['next', 'next_page', 'nextpage', 'next_page_url', 'nextpageurl', 'next_page_token', 'nextpagetoken', 'next_cursor', 'nextcursor', 'next_url', 'nexturl']);
/** A link or token to the page before: there is one only past the first page. */
const PREV = new Set(['prev', 'previous', 'prev_page', 'prevpage', 'previous_page', 'previouspage', 'prev_page_url', 'prevpageurl', 'previous_page_url', 'previouspageurl', 'prev_cursor', 'prevcursor', 'prev_url', 'prevurl', 'previous_url', 'previousurl']);
/** A flag that more follows. */
const MORE = new Set(['has_more', 'hasmore', 'has_next', 'hasnext', 'has_next_page', 'hasnextpage', 'more']);
/** How many pages there are. */
const PAGES = new Set(['last_page', 'lastpage', 'total_pages', 'totalpages', 'page_count', 'pagecount']);
/** How many items the whole list holds. */
const TOTAL = new Set([
  'total', 'total_count', 'totalcount', 'total_items', 'totalitems', 'total_results', 'totalresults', 'total_records', 'totalrecords',
  'total_entries', 'totalentries', 'count', 'record_count', 'recordcount', 'item_count', 'itemcount',
]);
/** How many items a page holds: a list as long as that may be a full page of more. */
const PAGE_SIZE = new Set(['per_page', 'perpage', 'page_size', 'pagesize', 'items_per_page', 'itemsperpage', 'page_limit', 'pagelimit', 'limit']);
/** Which page this is: past the first, the list is not whole. */
const PAGE = new Set(['page', 'current_page', 'currentpage', 'page_number', 'pagenumber', 'page_index']);
/** How many items come before this page. */
const OFFSET = new Set(['offset', 'skip']);
/** Objects that hold the above. */
const HOLDERS = new Set(['links', '_links', 'meta', 'pagination', 'paging', 'page_info', 'pageinfo', 'page']);

export interface PagingSigns {
  /** The first sign of a next page or of more pages, as `path: value`. */
  more?: string;
  /** The largest total the answer gives, and where. */
  total?: { path: string; n: number };
  /** The page size the answer gives, and where. */
  pageSize?: { path: string; n: number };
  /**
   * An error the answer reports beside (or in place of) the list, as API v2's error object
   * (`{"error": {"code": …}}`): where, and its code. A 200 with an error may hold a list cut short.
   */
  error?: string;
}

/** An error member's code, as API v2 gives it (`"error": "timeout"` or `"error": {"code": "timeout"}`), cut short; never its message (it can name a person). */
function errorCodeOf(value: unknown): string {
  const code = typeof value === 'string' ? value : typeof value === 'object' && value !== null ? (value as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code !== '' ? ` (code ${JSON.stringify(code.slice(0, 40))})` : '';
}

/** A count as a number: `10`, or the text `"10"` some servers send. */
export function countOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^\s*\d{1,15}\s*$/.test(value)) return Number(value);
  return undefined;
}

/** Adds the signs in a value beside the list at `path`, under `key`, to `signs`. */
export function pagingSigns(signs: PagingSigns, path: string, key: string, value: unknown, depth = 0): void {
  const name = key.toLowerCase();
  if ((name === 'error' || name === 'errors') && depth === 0 && isSet(value) && !(Array.isArray(value) && value.length === 0)) {
    signs.error ??= `${path}${errorCodeOf(value)}`;
    return;
  }
  // A link is named, not shown: its query may carry a token.
  if (NEXT.has(name) && isSet(value)) signs.more ??= `${path} is set`;
  else if (PREV.has(name) && isSet(value)) signs.more ??= `${path} is set, not the first page`;
  else if (MORE.has(name) && value === true) signs.more ??= `${path}: true`;
  else if (PAGES.has(name) && (countOf(value) ?? 0) > 1) signs.more ??= `${path}: ${String(value)}`;
  else if (PAGE.has(name) && (countOf(value) ?? 0) > 1) signs.more ??= `${path}: ${String(value)}, not the first page`;
  else if (OFFSET.has(name) && (countOf(value) ?? 0) > 0) signs.more ??= `${path}: ${String(value)}, not the list's start`;
  else if ((TOTAL.has(name) || /.count$/.test(name)) && countOf(value) !== undefined && countOf(value)! > (signs.total?.n ?? -1)) signs.total = { path, n: countOf(value)! };
  else if (PAGE_SIZE.has(name) && (countOf(value) ?? 0) > 0) signs.pageSize ??= { path, n: countOf(value)! };
  else if (HOLDERS.has(name) && depth < 2 && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const [inner, v] of Object.entries(value)) pagingSigns(signs, `${path}.${inner}`, inner, v, depth + 1);
  }
}

const isEmptyObject = (value: unknown) => typeof value === 'object' && value !== null && Object.keys(value).length === 0;
/** A link or token that says something: not null, empty, false or `{}`. */
const isSet = (value: unknown) => value !== null && value !== '' && value !== false && !isEmptyObject(value);

/**
 * The signs beside the list at `target` in an answer read whole (the webhooks list), added to
 * `signs` (its headers'): the keys of each object on the path but the list's own.
 */
export function answerPaging(answer: unknown, target: readonly string[], signs: PagingSigns = {}): PagingSigns {
  let node = answer;
  const path: string[] = [];
  for (const key of target) {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) break;
    for (const [name, value] of Object.entries(node)) if (name !== key) pagingSigns(signs, [...path, name].join('.'), name, value);
    node = (node as Record<string, unknown>)[key];
    path.push(key);
  }
  return signs;
}

/** Throws for a list at `path` of `count` items that the signs say is one page of more. */
export function refusePaged(path: string, signs: PagingSigns, count: number): void {
  refuseReportedError(path, signs);
  const paged = pagedBecause(signs, count);
  if (paged === undefined) return;
  throw new BridgeError('upstream.invalid_response', `upstream answered ${path} as one page of a longer list (${paged}); API v2 answers a whole list at once, and a page taken for the whole would make everyone on the other pages look deleted, so this list is not used`, {
    retryable: false,
    context: { path, sign: paged },
  });
}

/** Throws for an answer that reports an error beside the list at `path` (or where it should be). */
export function refuseReportedError(path: string, signs: PagingSigns): void {
  if (signs.error === undefined) return;
  throw new BridgeError('upstream.invalid_response', `upstream answered ${path} with an error beside it (${signs.error} is set): the list may be cut short, and a list taken for whole would make everyone missing from it look deleted, so it is not used`, {
    retryable: false,
    context: { path, sign: signs.error },
  });
}

/** Why an answer of `count` items is one page of more, or undefined when nothing says so. */
export function pagedBecause(signs: PagingSigns, count: number): string | undefined {
  if (signs.more !== undefined) return signs.more;
  if (signs.total && signs.total.n > count) return `${signs.total.path}: ${signs.total.n}, where the list holds ${count}`;
  // A list exactly as long as its page, and nothing that says it is all: a full page, maybe of more.
  if (signs.pageSize && count > 0 && count >= signs.pageSize.n && !(signs.total && signs.total.n <= count)) {
    return `${signs.pageSize.path}: ${signs.pageSize.n}, and the list holds as many`;
  }
  return undefined;
}
