#!/usr/bin/env node
// sdg-client: the Social Data Gateway from the command line. Exit codes: exit-codes.ts (and sdk/README.md).
import { Command, CommanderError, Option } from 'commander';
import { SdgApiError, SdgError } from '../errors.js';
import { registerAccountCommands } from './account-commands.js';
import { registerBulkCommands } from './bulk-commands.js';
import { exitCodeFor, exitCodes } from './exit-codes.js';
import { registerSocialCommands } from './social-commands.js';
import { nextCursorOf, visible } from './output.js';

// A reader that stops early (`| head`) closes the pipe: stop quietly, as other command-line tools
// do, rather than crash on EPIPE with a stack trace (and, for a list, stop buying its pages).
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

function program(): Command {
  const p = new Command('sdg-client')
    .description('Read social data and run bulk exports through a Social Data Gateway.')
    .addOption(new Option('--api-key <key>', 'API key').env('SDG_API_KEY'))
    .addOption(new Option('--base-url <url>', 'the gateway').env('SDG_BASE_URL').default('http://127.0.0.1:8080'))
    .option('--json', 'machine-readable output on stdout')
    .option('--no-progress', 'no progress bars on stderr')
    .option('--max-retries <n>', 'retries of a 429 or 503 answer', '4')
    .addHelpText(
      'after',
      '\nExit codes: 0 ok, 1 unexpected error, 2 usage or invalid request, 3 authentication, 4 insufficient credits,\n' +
        '5 rate limited, 6 not found, 7 protected account, 8 conflict, 9 upstream failure, 10 network, 11 export failed or not verified.',
    )
    // After a usage error, one line says where the usage is rather than printing all of it.
    .showHelpAfterError('(add --help for the usage)')
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
    await program().parseAsync(argv);
    return exitCodes.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are not failures; every other complaint of commander is a usage error.
      return error.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
    }
    const code = exitCodeFor(error);
    if (json) {
      const e = error instanceof SdgApiError ? { code: error.code, status: error.status, message: error.message, details: error.details ?? null, requestId: error.requestId ?? null } : { code: error instanceof SdgError ? error.name : 'error', message: error instanceof Error ? error.message : String(error) };
      const nextCursor = nextCursorOf(error);
      process.stderr.write(`${JSON.stringify({ error: e, exitCode: code, ...(nextCursor ? { nextCursor } : {}) })}\n`);
    } else {
      const msg = error instanceof Error ? error.message : String(error);
      process.stderr.write(`sdg-client: ${error instanceof SdgApiError && error.status ? `${error.code}: ` : ''}${visible(msg)}\n`);
      if (code === exitCodes.failure && error instanceof Error && error.stack && !(error instanceof SdgError)) process.stderr.write(`${error.stack}\n`);
    }
    return code;
  }
}

process.exitCode = await main(process.argv);
