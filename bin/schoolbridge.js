#!/usr/bin/env node
// The schoolbridge executable. TypeScript runs without a build step (src/load-typescript.mjs), so
// what runs is exactly what is in src/ (see README, "Why no build step").
import { stopEarly } from '../src/cli/early-signals.mjs';
import { loadTypeScript } from '../src/load-typescript.mjs';

stopEarly(process.argv.slice(2));

await loadTypeScript(new URL('../src/cli/main.ts', import.meta.url));
