// Runs every code block of sdk/README.md as written against the real gateway, and type-checks its
// TypeScript blocks, so the documentation cannot drift from the SDK. A block whose info string
// says `norun` (how to get a key from a running demo) is skipped; the test supplies those values.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { repoRoot } from '../helpers/processes.js';
import { startGateway, type Gateway } from './gateway.js';

interface Block {
  lang: string;
  code: string;
  line: number;
}

function blocksOf(markdown: string): Block[] {
  const blocks: Block[] = [];
  for (const m of markdown.matchAll(/^```(\w+)([^\n]*)\n([\s\S]*?)^```$/gm)) {
    if (m[2]!.includes('norun')) continue;
    blocks.push({ lang: m[1]!, code: m[3]!, line: markdown.slice(0, m.index).split('\n').length });
  }
  return blocks;
}

function run(cmd: string, args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

// The blocks run from a temporary directory: tsx is named by its resolved location, not looked up from there.
const tsx = import.meta.resolve('tsx');
const sdkEntry = join(repoRoot, 'sdk', 'src', 'index.js');
const asLocal = (code: string) => code.replaceAll("'@social-data-gateway/sdk'", JSON.stringify(sdkEntry));
const expected: Array<[lang: string, output: RegExp]> = [
  ['ts', /\d+ pages, \d+ credits\n[\s\S]*no such tweet \(not_found, request \S+\)/],
  ['ts', /\S/],
  ['ts', /^true true$/m],
  ['ts', /added: 1[\s\S]*not_found: 1[\s\S]*last-hour\.jsonl\.gz: \d+ bytes, sha256 [0-9a-f]{64}/],
  ['sh', /exit code 6/],
];

describe('sdk/README.md', () => {
  const blocks = blocksOf(readFileSync(join(repoRoot, 'sdk', 'README.md'), 'utf8'));
  let g: Gateway;
  let env: Record<string, string>;
  let dir: string;
  before(async () => {
    g = await startGateway();
    const a = await g.account({ credits: 1_000_000 });
    env = { SDG_API_KEY: a.apiKey, SDG_BASE_URL: g.url, SDG_USERNAME: g.sample.usernames[0]!, SDG_TWEET_ID: g.sample.tweetIds[0]! };
    dir = mkdtempSync(join(tmpdir(), 'sdk-readme-'));
  });
  after(async () => {
    await g.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the blocks are the ones this test knows', () => {
    assert.deepEqual(
      blocks.map((b) => b.lang),
      expected.map(([lang]) => lang),
    );
  });

  test('each block runs as written and prints what the README says', async () => {
    for (const [i, block] of blocks.entries()) {
      const where = `sdk/README.md block at line ${block.line}`;
      let r;
      if (block.lang === 'ts') {
        const file = join(dir, `block-${i}.mts`);
        writeFileSync(file, asLocal(block.code));
        r = await run(process.execPath, ['--import', tsx, file], dir, env);
      } else {
        assert.equal(block.lang, 'sh', where);
        const file = join(dir, `block-${i}.sh`);
        const cli = join(repoRoot, 'sdk', 'src', 'cli', 'main.ts');
        writeFileSync(file, `set -euo pipefail\nsdg-client() { node --import ${tsx} ${JSON.stringify(cli)} "$@"; }\n${block.code}`);
        r = await run('bash', [file], dir, env);
      }
      assert.equal(r.code, 0, `${where} exited ${r.code}: ${r.stderr}`);
      assert.match(r.stdout, expected[i]![1], `${where} printed:\n${r.stdout}`);
    }
  });

  test('the TypeScript blocks type-check against the SDK', async () => {
    const files: string[] = [];
    for (const [i, block] of blocks.entries()) {
      if (block.lang !== 'ts') continue;
      const file = join(dir, `typed-${i}.mts`);
      writeFileSync(file, `${asLocal(block.code)}\nexport {};\n`);
      files.push(file);
    }
    const tsconfig = join(dir, 'tsconfig.json');
    writeFileSync(
      tsconfig,
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023'],
          types: ['node'],
          typeRoots: [join(repoRoot, 'node_modules', '@types')],
          strict: true,
          noEmit: true,
          skipLibCheck: true,
        },
        files,
      }),
    );
    const r = await run(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', tsconfig], dir, {});
    assert.equal(r.code, 0, r.stdout + r.stderr);
  });
});
