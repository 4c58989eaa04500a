#!/usr/bin/env node
// The command npm links at install time. In a clone, `npm ci` runs before `npm run build:sdk`, and
// npm links no command whose file is missing then: pointing the bin at dist/cli/main.js left
// `npx sdg-client` unknown (npm looked it up in the registry). This file is always there; it runs
// the built command line, or says how to build it.
import { existsSync } from 'node:fs';
import { URL } from 'node:url';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('sdg-client: the SDK is not built yet: run `npm run build:sdk` in the repository (or `npm run build -w sdk`).\n');
  process.exit(1);
}
await import(main.href);
