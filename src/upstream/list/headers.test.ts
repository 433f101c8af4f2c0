import { describe, expect, it } from 'vitest';
import { headerPaging, linksNext } from './headers.js';
import { pagedBecause } from './paging.js';

describe('paging signs in a list answer\'s headers', () => {
  it.each([
    ['<https://u/api/v2/students?page=2>; rel="next"', true],
    ['<https://u/api/v2/students?page=1>; rel="prev", <https://u/api/v2/students?page=3>; rel=next', true],
    ['<https://u/x>; title="a, b"; rel="last next"', true],
    ['<https://u/api/v2/students?page=1>; rel="first"', false],
    ['<https://u/next>; rel="canonical"', false],
    ['', false],
  ])('reads a Link header: %s', (link, next) => {
    expect(linksNext(link)).toBe(next);
  });

  it.each([
    [{ link: '<https://u/api/v2/students?page=2&token=t>; rel="next"' }, 9, 'header Link: rel="next"'],
    [{ 'x-total-count': '10' }, 9, 'header x-total-count: 10, where the list holds 9'],
    [{ 'x-next-page': '2' }, 9, 'header x-next-page is set'],
    [{ 'x-has-more': 'true' }, 9, 'header x-has-more: true'],
    [{ 'x-total-pages': '3' }, 9, 'header x-total-pages: 3'],
    [{ 'x-page': '2' }, 9, 'header x-page: 2, not the first page'],
    [{ 'x-per-page': '9' }, 9, 'header x-per-page: 9, and the list holds as many'],
    [{ 'x-pagination-total-count': '20', 'x-pagination-page-count': '2' }, 19, 'header x-pagination-page-count: 2'],
    [{ 'x-pagination-total-count': '20' }, 19, 'header x-pagination-total-count: 20, where the list holds 19'],
    [{ link: '<https://u/api/v2/students?page=1>; rel="prev"' }, 9, 'header Link: rel="prev", not the first page'],
    [{ link: '<https://u/api/v2/students?page=1>; rel="first", <https://u/api/v2/students?page=2>; rel="last"' }, 9, 'header Link: a first and a last page apart'],
  ])('names what says a list is one page of more: %o', (headers, count, sign) => {
    expect(pagedBecause(headerPaging(headers), count)).toBe(sign);
  });

  it.each([
    [{ 'x-total-count': '9', 'x-per-page': '9', 'x-page': '1', 'x-total-pages': '1' }, 9],
    [{ 'x-next-page': '', 'x-has-more': 'false', 'content-type': 'application/json' }, 9],
    [{ 'x-total-count': 'many' }, 9],
    [{ link: '<https://u/api/v2/students?page=1>; rel="first", <https://u/api/v2/students?page=1>; rel="last"' }, 9],
  ])('takes a whole list whose headers speak of pages: %o', (headers, count) => {
    expect(pagedBecause(headerPaging(headers), count)).toBeUndefined();
  });
});
