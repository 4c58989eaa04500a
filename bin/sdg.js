#!/usr/bin/env node
// `sdg` runs the TypeScript sources through tsx, so a clone needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
