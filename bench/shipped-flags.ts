// The Node flags `npm start` gives the served process, read from package.json's start script, so
// that every benchmark process (servers, the ingest, export and scaling children) measures what ships
// and nothing else. scripts/start.mjs serves dist/src/cli/main.js in its own process, so these are
// the served process's flags.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../test/helpers/processes.js';

export const SERVER_FLAGS = shippedNodeFlags();

function shippedNodeFlags(): string[] {
  const start = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const words = start.trim().split(/\s+/);
  if (words[0] !== 'node' || !words.includes('scripts/start.mjs')) throw new Error(`package.json's start script does not run node scripts/start.mjs: ${start}`);
  return words.slice(1, words.indexOf('scripts/start.mjs'));
}
