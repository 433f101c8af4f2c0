import { describe, expect, it } from 'vitest';
import type { Webhook } from '../upstream/index.js';
import { isMarkedDeleted, planReconcile, sameUrl } from './reconcile-plan.js';

const OURS = 'http://bridge.example:8080/webhooks/v2';
const THEIRS = 'https://crm.example/hooks';
const hook = (id: number, event: string, callbackUrl = OURS, extra: Record<string, unknown> = {}): Webhook => ({ id, event, callbackUrl, ...extra });
const EVENTS = ['invoice.created', 'invoice.updated'];

interface Case {
  name: string;
  existing: Webhook[];
  events?: string[];
  prune?: boolean;
  create: string[];
  delete: [number, 'duplicate' | 'unlisted'][];
  keep: number[];
  foreign?: number;
}

const cases: Case[] = [
  { name: 'nothing registered', existing: [], create: EVENTS, delete: [], keep: [] },
  { name: 'already converged', existing: [hook(1, 'invoice.created'), hook(2, 'invoice.updated')], create: [], delete: [], keep: [1, 2] },
  { name: 'one missing', existing: [hook(1, 'invoice.created')], create: ['invoice.updated'], delete: [], keep: [1] },
  {
    name: 'duplicates: the oldest is kept',
    existing: [hook(7, 'invoice.created'), hook(3, 'invoice.created'), hook(5, 'invoice.created'), hook(4, 'invoice.updated')],
    create: [], delete: [[5, 'duplicate'], [7, 'duplicate']], keep: [3, 4],
  },
  {
    name: 'foreign callback URLs are never touched, even for our events',
    existing: [hook(1, 'invoice.created', THEIRS), hook(2, 'lesson.moved', THEIRS), hook(3, 'invoice.created', THEIRS)],
    create: EVENTS, delete: [], keep: [], foreign: 3,
  },
  { name: 'an unlisted event of ours is pruned', existing: [hook(1, 'invoice.created'), hook(2, 'invoice.updated'), hook(3, 'student.created')], create: [], delete: [[3, 'unlisted']], keep: [1, 2] },
  { name: 'without prune it stays', existing: [hook(1, 'invoice.created'), hook(3, 'student.created')], prune: false, create: ['invoice.updated'], delete: [], keep: [1] },
  {
    name: 'without prune duplicates still go',
    existing: [hook(1, 'invoice.created'), hook(2, 'invoice.created'), hook(3, 'invoice.updated')], prune: false,
    create: [], delete: [[2, 'duplicate']], keep: [1, 3],
  },
  {
    name: 'entries marked deleted are ignored',
    existing: [hook(1, 'invoice.created', OURS, { isDeleted: true }), hook(2, 'invoice.updated', OURS, { deletedAt: '2026-01-01 00:00:00' }), hook(3, 'invoice.updated')],
    create: ['invoice.created'], delete: [], keep: [3],
  },
  { name: 'the same id listed twice is one registration', existing: [hook(1, 'invoice.created'), hook(1, 'invoice.created'), hook(2, 'invoice.updated')], create: [], delete: [], keep: [1, 2] },
  { name: 'our URL spelled differently is still ours', existing: [hook(1, 'invoice.created', 'HTTP://Bridge.Example:8080/webhooks/v2'), hook(2, 'invoice.updated', 'http://bridge.example/../webhooks/v2'.replace('example', 'example:8080'))], create: [], delete: [], keep: [1, 2] },
  { name: 'a different path is not ours', existing: [hook(1, 'invoice.created', `${OURS}/x`)], create: EVENTS, delete: [], keep: [], foreign: 1 },
  { name: 'our URL with a trailing slash is still ours', existing: [hook(1, 'invoice.created', `${OURS}/`), hook(2, 'invoice.updated')], create: [], delete: [], keep: [1, 2] },
  { name: 'no events configured: all ours go', existing: [hook(1, 'invoice.created'), hook(2, 'invoice.updated', THEIRS)], events: [], create: [], delete: [[1, 'unlisted']], keep: [], foreign: 1 },
  { name: 'an event configured twice is wanted once', existing: [], events: ['invoice.created', 'invoice.created'], create: ['invoice.created'], delete: [], keep: [] },
];

describe('planReconcile', () => {
  it.each(cases)('$name', (c) => {
    const plan = planReconcile(c.existing, { events: c.events ?? EVENTS, callbackUrl: OURS, prune: c.prune ?? true });
    expect(plan.create).toEqual(c.create);
    expect(plan.delete.map((d) => [d.webhook.id, d.why])).toEqual(c.delete);
    expect(plan.keep.map((w) => w.id)).toEqual(c.keep);
    expect(plan.foreign).toBe(c.foreign ?? 0);
  });

  it('is a fixed point: applying a plan and planning again gives nothing to do', () => {
    for (const c of cases) {
      const wanted = { events: c.events ?? EVENTS, callbackUrl: OURS, prune: c.prune ?? true };
      const plan = planReconcile(c.existing, wanted);
      const deleted = new Set(plan.delete.map((d) => d.webhook.id));
      const after = [...c.existing.filter((w) => !deleted.has(w.id)), ...plan.create.map((event, i) => hook(1000 + i, event))];
      const again = planReconcile(after, wanted);
      expect([again.create, again.delete], c.name).toEqual([[], []]);
    }
  });
});

describe('helpers', () => {
  it.each([
    [{ isDeleted: true }, true], [{ isDeleted: 1 }, true], [{ isDeleted: false }, false], [{ deletedAt: null }, false], [{ deletedAt: '' }, false], [{}, false],
  ])('isMarkedDeleted(%j) = %s', (extra, expected) => {
    expect(isMarkedDeleted(hook(1, 'a.b', OURS, extra))).toBe(expected);
  });

  it('sameUrl compares URLs, and falls back to text for non-URLs', () => {
    expect(sameUrl('http://a:80/x', 'http://A/x')).toBe(true);
    expect(sameUrl('http://a/x', 'http://a/y')).toBe(false);
    expect(sameUrl('http://a/webhooks/v2', 'http://a/webhooks/v2/')).toBe(true);
    expect(sameUrl('http://a/webhooks/v2', 'http://a/webhooks/v2x')).toBe(false);
    expect(sameUrl('http://a', 'http://a/')).toBe(true);
    // An empty query or a fragment added by the service: the same route gets the deliveries.
    expect(sameUrl('http://a/webhooks/v2', 'http://a/webhooks/v2?')).toBe(true);
    expect(sameUrl('http://a/webhooks/v2', 'http://a/webhooks/v2/?#')).toBe(true);
    expect(sameUrl('http://a/webhooks/v2', 'http://a/webhooks/v2#top')).toBe(true);
    expect(sameUrl('http://a/webhooks/v2', 'http://a/webhooks/v2?to=b')).toBe(false);
    expect(sameUrl('not a url', 'not a url')).toBe(true);
    expect(sameUrl('not a url', 'http://a/')).toBe(false);
  });
});
