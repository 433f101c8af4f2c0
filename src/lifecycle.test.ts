import { describe, expect, it, vi } from 'vitest';
import { silentLogger } from './log.js';
import { component, createLifecycle, type Component } from './lifecycle.js';

function recorder(events: string[], name: string, fail?: 'start'): Component {
  return component(
    name,
    async () => {
      if (fail === 'start') throw new Error(`${name} broke`);
      events.push(`start ${name}`);
    },
    async () => {
      events.push(`stop ${name}`);
    },
  );
}

describe('lifecycle', () => {
  it('starts in order, stops in reverse, and stopping twice is harmless', async () => {
    const events: string[] = [];
    const lifecycle = createLifecycle([recorder(events, 'a'), recorder(events, 'b')], silentLogger());
    await lifecycle.start();
    await lifecycle.stop();
    await lifecycle.stop();
    expect(events).toEqual(['start a', 'start b', 'stop b', 'stop a']);
  });

  it('stops what started when a later part fails to start', async () => {
    const events: string[] = [];
    const lifecycle = createLifecycle([recorder(events, 'a'), recorder(events, 'b', 'start'), recorder(events, 'c')], silentLogger());
    await expect(lifecycle.start()).rejects.toThrow('b broke');
    expect(events).toEqual(['start a', 'stop a']);
  });

  it('ends a start when a stop is asked for meanwhile: nothing more starts, the part starting is stopped too', async () => {
    const events: string[] = [];
    let opened!: () => void;
    const slow = component(
      'slow',
      () => {
        events.push('starting slow');
        return new Promise<void>((resolve) => (opened = () => (events.push('start slow'), resolve())));
      },
      async () => {
        events.push('stop slow');
      },
    );
    const lifecycle = createLifecycle([recorder(events, 'a'), slow, recorder(events, 'c')], silentLogger());
    const starting = lifecycle.start();
    await vi.waitFor(() => expect(events).toContain('starting slow'));
    const stopping = lifecycle.stop();
    opened();
    await starting;
    await stopping;
    expect(events).toEqual(['start a', 'starting slow', 'start slow', 'stop slow', 'stop a']);
    // A later start is a start again.
    const again = lifecycle.start();
    await vi.waitFor(() => expect(events.slice(5)).toEqual(['start a', 'starting slow']));
    opened();
    await again;
    expect(events.slice(5)).toEqual(['start a', 'starting slow', 'start slow', 'start c']);
  });

  it('resolves a start that fails once a stop was asked for (a wait the stop cancelled), stopping what started once', async () => {
    const events: string[] = [];
    let fail!: () => void;
    const breaking: Component = { name: 'breaking', start: () => new Promise((_, reject) => (fail = () => reject(new Error('broke')))), stop: async () => void events.push('stop breaking') };
    const lifecycle = createLifecycle([recorder(events, 'a'), breaking], silentLogger());
    const starting = lifecycle.start();
    await vi.waitFor(() => expect(fail).toBeTypeOf('function'));
    const stopping = lifecycle.stop();
    fail();
    await expect(starting).resolves.toBeUndefined();
    await stopping;
    expect(events).toEqual(['start a', 'stop a']);
  });

  it('cancels the wait of the part starting when a stop is asked for', async () => {
    const events: string[] = [];
    let cancelled!: () => void;
    const waiting: Component = {
      name: 'waiting',
      start: () => new Promise((_resolve, reject) => (cancelled = () => reject(new Error('cancelled')))),
      stop: async () => void events.push('stop waiting'),
      cancel: () => (events.push('cancel waiting'), cancelled()),
    };
    const lifecycle = createLifecycle([recorder(events, 'a'), waiting, recorder(events, 'c')], silentLogger());
    const starting = lifecycle.start();
    await vi.waitFor(() => expect(cancelled).toBeTypeOf('function'));
    await lifecycle.stop();
    await expect(starting).resolves.toBeUndefined();
    expect(events).toEqual(['start a', 'cancel waiting', 'stop a']);
  });

  it('bounds a stop that hangs', async () => {
    const events: string[] = [];
    const hanging: Component = { name: 'hang', start: async () => {}, stop: () => new Promise(() => {}) };
    const lifecycle = createLifecycle([recorder(events, 'a'), hanging], silentLogger(), 20);
    await lifecycle.start();
    await lifecycle.stop();
    expect(events).toEqual(['start a', 'stop a']);
  });
});
