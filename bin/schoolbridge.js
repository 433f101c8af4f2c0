#!/usr/bin/env node
// The schoolbridge executable. TypeScript runs through tsx's loader: no build step, so what runs is
// exactly what is in src/ (see README, "Why no build step").
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
