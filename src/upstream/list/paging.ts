/**
 * Signs in a list answer that it is one page of a longer list. API v2 shows no pagination: a list
 * call answers the whole list. An answer that says otherwise beside the list (a `next` link, more
 * pages, a total above what it holds) must not be taken for the whole list: the poll would diff the
 * people on later pages as deleted. Only evidence of more counts: a `next` of null, `has_more:
 * false` or `last_page: 1` is a whole list that merely speaks of pages.
 */

/** A link or token to the next page: present unless empty. */
const NEXT = new Set(['next', 'next_page', 'nextpage', 'next_page_url', 'nextpageurl', 'next_page_token', 'nextpagetoken', 'next_cursor', 'nextcursor', 'next_url', 'nexturl']);
/** A flag that more follows. */
const MORE = new Set(['has_more', 'hasmore', 'has_next', 'hasnext', 'has_next_page', 'hasnextpage', 'more']);
/** How many pages there are. */
const PAGES = new Set(['last_page', 'lastpage', 'total_pages', 'totalpages', 'page_count', 'pagecount']);
/** How many items the whole list holds. */
const TOTAL = new Set(['total', 'total_count', 'totalcount', 'total_items', 'totalitems', 'total_results', 'totalresults']);
/** Objects that hold the above. */
const HOLDERS = new Set(['links', 'meta', 'pagination', 'paging', 'page_info', 'pageinfo', 'page']);

export interface PagingSigns {
  /** The first sign of a next page or of more pages, as `path: value`. */
  more?: string;
  /** The largest total the answer gives, and where. */
  total?: { path: string; n: number };
}

/** Adds the signs in a value beside the list at `path`, under `key`, to `signs`. */
export function pagingSigns(signs: PagingSigns, path: string, key: string, value: unknown, depth = 0): void {
  const name = key.toLowerCase();
  // A link is named, not shown: its query may carry a token.
  if (NEXT.has(name) && value !== null && value !== '' && value !== false && !isEmptyObject(value)) signs.more ??= `${path} is set`;
  else if (MORE.has(name) && value === true) signs.more ??= `${path}: true`;
  else if (PAGES.has(name) && typeof value === 'number' && value > 1) signs.more ??= `${path}: ${value}`;
  else if (TOTAL.has(name) && typeof value === 'number' && value > (signs.total?.n ?? -1)) signs.total = { path, n: value };
  else if (HOLDERS.has(name) && depth < 2 && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const [inner, v] of Object.entries(value)) pagingSigns(signs, `${path}.${inner}`, inner, v, depth + 1);
  }
}

const isEmptyObject = (value: unknown) => typeof value === 'object' && value !== null && Object.keys(value).length === 0;

/** Why an answer of `count` items is one page of more, or undefined when nothing says so. */
export function pagedBecause(signs: PagingSigns, count: number): string | undefined {
  if (signs.more !== undefined) return signs.more;
  if (signs.total && signs.total.n > count) return `${signs.total.path}: ${signs.total.n}, where the list holds ${count}`;
  return undefined;
}
