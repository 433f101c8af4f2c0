import { countOf, type PagingSigns } from './paging.js';

/**
 * Signs of paging in a list answer's headers (paging.ts reads those beside the list in its body):
 * a `Link` to the `next` page (RFC 8288), or the `X-` headers of the usual frameworks. A total or a
 * page size is kept for the list's end, where its length is known.
 */
export type Headers = Record<string, string | string[] | undefined>;

const NEXT = ['x-next-page', 'x-next', 'x-next-cursor', 'x-next-page-token', 'x-next-url'];
const MORE = ['x-has-more', 'x-more', 'x-has-next'];
const PAGES = ['x-total-pages', 'x-page-count', 'x-pages', 'x-last-page', 'x-pagination-page-count'];
const PAGE = ['x-page', 'x-current-page', 'x-pagination-current-page'];
const TOTAL = ['x-total-count', 'x-total', 'x-total-items', 'x-total-results', 'x-total-records', 'x-pagination-total-count'];
const PAGE_SIZE = ['x-per-page', 'x-page-size', 'x-pagination-per-page'];

const first = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value)?.trim();

/** The targets of a `Link` header by relation: `<…>; rel="next"`, a `rel` of several words naming each. */
export function linkRelations(link: string | string[] | undefined): Map<string, string> {
  const relations = new Map<string, string>();
  const values = Array.isArray(link) ? link : link === undefined ? [] : [link];
  for (const value of values) {
    for (const match of value.matchAll(/<([^>]*)>([^<]*)/g)) {
      const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(match[2]!);
      for (const word of (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/)) if (word) relations.set(word, match[1]!);
    }
  }
  return relations;
}

/** Whether a `Link` header names a `next` page. */
export const linksNext = (link: string | string[] | undefined): boolean => linkRelations(link).has('next');

export function headerPaging(headers: Headers): PagingSigns {
  const signs: PagingSigns = {};
  // A link is named, not shown: its query may carry a token.
  const links = linkRelations(headers.link);
  if (links.has('next')) signs.more = 'header Link: rel="next"';
  else if (links.has('prev') || links.has('previous')) signs.more = 'header Link: rel="prev", not the first page';
  else if (links.has('first') && links.has('last') && links.get('first') !== links.get('last')) signs.more = 'header Link: a first and a last page apart';
  for (const name of NEXT) if (!signs.more && first(headers[name])) signs.more = `header ${name} is set`;
  for (const name of MORE) if (!signs.more && /^(true|1|yes)$/i.test(first(headers[name]) ?? '')) signs.more = `header ${name}: ${first(headers[name])}`;
  for (const name of [...PAGES, ...PAGE]) {
    const n = countOf(first(headers[name]));
    if (!signs.more && n !== undefined && n > 1) signs.more = `header ${name}: ${n}${PAGE.includes(name) ? ', not the first page' : ''}`;
  }
  for (const name of TOTAL) {
    const n = countOf(first(headers[name]));
    if (n !== undefined && n > (signs.total?.n ?? -1)) signs.total = { path: `header ${name}`, n };
  }
  for (const name of PAGE_SIZE) {
    const n = countOf(first(headers[name]));
    if (!signs.pageSize && n !== undefined && n > 0) signs.pageSize = { path: `header ${name}`, n };
  }
  return signs;
}
