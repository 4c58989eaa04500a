// The package as published: its generated types match the gateway's document, and `tsc -p sdk`
// builds JavaScript and declarations whose CLI and entry point load.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, test } from 'node:test';
import { schemaFile, schemaText } from '../../sdk/scripts/schema-text.js';
import { repoRoot } from '../helpers/processes.js';

function run(args: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
}

describe('@social-data-gateway/sdk package', () => {
  test('npm links sdg-client at install, before the SDK is built, so `npx sdg-client` works after `npm run build:sdk`', () => {
    // npm links no command whose file is missing at install time; the bin is a file that is always there.
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'sdk', 'package.json'), 'utf8')) as { bin: Record<string, string>; files: string[] };
    assert.ok(pkg.files.includes('bin'), 'published with the package');
    const link = join(repoRoot, 'node_modules', '.bin', 'sdg-client');
    assert.ok(existsSync(link), `${link}: npm ci linked it`);
    assert.equal(realpathSync(link), realpathSync(join(repoRoot, 'sdk', pkg.bin['sdg-client']!)));
  });

  test('the linked command runs the built command line, or says how to build it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sdg-client-bin-'));
    try {
      mkdirSync(join(dir, 'bin'));
      copyFileSync(join(repoRoot, 'sdk', 'bin', 'sdg-client.js'), join(dir, 'bin', 'sdg-client.js'));
      writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
      const unbuilt = await run([join(dir, 'bin', 'sdg-client.js'), 'balance']);
      assert.equal(unbuilt.code, 1);
      assert.match(unbuilt.out, /not built yet: run `npm run build:sdk`/);
      mkdirSync(join(dir, 'dist', 'cli'), { recursive: true });
      writeFileSync(join(dir, 'dist', 'cli', 'main.js'), 'process.stdout.write(JSON.stringify(process.argv.slice(2)));');
      const built = await run([join(dir, 'bin', 'sdg-client.js'), 'balance', '--json']);
      assert.equal(built.code, 0, built.out);
      assert.equal(built.out, '["balance","--json"]');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('sdk/src/schema.d.ts is what the API document generates (else: npm run generate -w sdk)', async () => {
    const { text, from } = await schemaText();
    assert.ok(readFileSync(schemaFile, 'utf8') === text, `sdk/src/schema.d.ts differs from what ${from} generates: run npm run generate -w sdk`);
  });

  test('tsc -p sdk builds ESM with declarations; the built CLI and entry point load', async () => {
    // Inside sdk/ so that the built files find the dependencies as an installed package would.
    const out = mkdtempSync(join(repoRoot, 'sdk', '.tmp-build-'));
    try {
      const built = await run([join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'sdk', '--outDir', out]);
      assert.equal(built.code, 0, built.out);
      copyFileSync(schemaFile, join(out, 'schema.d.ts'));
      for (const f of ['index.js', 'index.d.ts', 'client.d.ts', 'cli/main.js']) assert.ok(existsSync(join(out, f)), f);
      assert.match(readFileSync(join(out, 'cli', 'main.js'), 'utf8'), /^#!\/usr\/bin\/env node\n/);
      const help = await run([join(out, 'cli', 'main.js'), '--help']);
      assert.equal(help.code, 0, help.out);
      assert.match(help.out, /Usage: sdg-client/);
      const sdk = (await import(pathToFileURL(join(out, 'index.js')).href)) as Record<string, unknown>;
      assert.equal(typeof sdk.SdgClient, 'function');
      assert.equal(typeof sdk.InsufficientCreditsError, 'function');
      const pkg = JSON.parse(readFileSync(join(repoRoot, 'sdk', 'package.json'), 'utf8')) as { exports: { '.': { types: string; import: string } }; bin: Record<string, string> };
      assert.equal(pkg.exports['.'].types, './dist/index.d.ts');
      assert.equal(pkg.bin['sdg-client'], './bin/sdg-client.js');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
