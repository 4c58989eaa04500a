// Writes src/schema.d.ts from the gateway's OpenAPI document (see schema-text.ts for which one).
// `npm run generate -w sdk`, or `npm run generate -w sdk -- --served` to use the served document.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { schemaFile, schemaText } from './schema-text.js';

const { text, from } = await schemaText({ served: process.argv.includes('--served') });
if (existsSync(schemaFile) && readFileSync(schemaFile, 'utf8') === text) console.log(`${schemaFile}: unchanged (${from})`);
else {
  writeFileSync(schemaFile, text);
  console.log(`${schemaFile}: written from ${from}`);
}
