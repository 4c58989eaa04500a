// The package as published: its generated types match the gateway's document, and `tsc -p sdk`
// builds JavaScript and declarations whose CLI and entry point load.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
      assert.equal(pkg.bin['sdg-client'], './dist/cli/main.js');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
