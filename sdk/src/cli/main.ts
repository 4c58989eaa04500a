#!/usr/bin/env node
// sdg-client: the Social Data Gateway from the command line. Exit codes: exit-codes.ts (and sdk/README.md).
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { registerAccountCommands } from './account-commands.js';
import { registerBulkCommands } from './bulk-commands.js';
import { exitCodes } from './exit-codes.js';
import { report, reportUsage } from './report.js';
import { registerSocialCommands } from './social-commands.js';

// sdk/package.json, from src/cli/ and from dist/cli/ alike.
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

// A reader that stops early (`| head`) closes the pipe: stop quietly, as other command-line tools
// do, rather than crash on EPIPE with a stack trace (and, for a list, stop buying its pages).
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

function program(json: boolean): Command {
  const p = new Command('sdg-client')
    .description('Read social data and run bulk exports through a Social Data Gateway.')
    .version(version, '--version', 'print the version')
    .addOption(new Option('--api-key <key>', 'API key (other users can see it in `ps`: prefer SDG_API_KEY or --api-key-file)').env('SDG_API_KEY'))
    .option('--api-key-file <path>', 'read the API key from this file (- for stdin)')
    .addOption(new Option('--base-url <url>', 'the gateway').env('SDG_BASE_URL').default('http://127.0.0.1:8080'))
    .option('--json', 'machine-readable output on stdout, and errors as JSON on stderr')
    .option('--no-progress', 'no progress bars on stderr')
    .option(
      '--max-retries <n>',
      'retries of what charged nothing: a 429 or 503 answer, a connection that never opened; and of a free call or a POST (by its Idempotency-Key) whose answer was lost or late. A charged call whose request may have reached the gateway is never sent again',
      '4',
    )
    .addHelpText(
      'after',
      '\nExit codes: 0 ok, 1 unexpected error, 2 usage or invalid request, 3 authentication, 4 insufficient credits,\n' +
        '5 rate limited, 6 not found, 7 protected account, 8 conflict, 9 upstream failure or gateway unavailable, 10 network,\n' +
        '11 export failed or not verified, 12 key created but its secret lost (revoked).',
    )
    // After a usage error, one line says where the usage is rather than printing all of it.
    .showHelpAfterError('(add --help for the usage)')
    // Under --json a usage error is told as JSON (main), not as commander's text.
    .configureOutput(json ? { writeErr: () => undefined } : {})
    .exitOverride();
  registerSocialCommands(p);
  registerBulkCommands(p);
  registerAccountCommands(p);
  for (const c of p.commands) {
    c.exitOverride();
    for (const sub of c.commands) sub.exitOverride();
  }
  return p;
}

async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  try {
    await program(json).parseAsync(argv);
    return exitCodes.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are not failures; every other complaint of commander is a usage error.
      if (error.exitCode === 0) return exitCodes.ok;
      return json ? reportUsage(error.message) : exitCodes.usage;
    }
    return report(error, json);
  }
}

process.exitCode = await main(process.argv);
