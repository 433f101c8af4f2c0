import { describe, expect, it } from 'vitest';
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

  it('bounds a stop that hangs', async () => {
    const events: string[] = [];
    const hanging: Component = { name: 'hang', start: async () => {}, stop: () => new Promise(() => {}) };
    const lifecycle = createLifecycle([recorder(events, 'a'), hanging], silentLogger(), 20);
    await lifecycle.start();
    await lifecycle.stop();
    expect(events).toEqual(['start a', 'stop a']);
  });
});
