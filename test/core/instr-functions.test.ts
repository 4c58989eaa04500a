// bench/instr-functions.ts names a callgrind window's functions: JIT'd code by V8's perf map (where
// code objects overlap, the one written last), V8's optimizing compiler folded into one line.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { byFunction, jitName, readJitMap } from '../../bench/instr-functions.js';

const MAP = [
  '1000 100 JS:~handler file:///app.js:1:1',
  '2000 40 JS:*keyedPairs file:///app.js:9:3',
  // Code replaced at the same address later (optimized after the baseline): the later line names it.
  '1000 80 JS:*handler file:///app.js:1:1',
  '3000 10 RegExp:^[0-9]+$',
  // A small code object, freed, then its space taken by a larger one written later that starts
  // before it: the later one holds the address.
  '4050 10 JS:*old file:///app.js:20:1',
  '4000 100 JS:*new file:///app.js:30:1',
].join('\n');

test('JIT addresses resolve to the code written last among the ranges that hold them', () => {
  const map = readJitMap(MAP);
  assert.equal(jitName(map, 0x1010), 'JS:*handler file:///app.js:1:1');
  assert.equal(jitName(map, 0x1090), 'JS:~handler file:///app.js:1:1', 'beyond the newer, shorter code: only the older range holds it');
  assert.equal(jitName(map, 0x2000), 'JS:*keyedPairs file:///app.js:9:3');
  assert.equal(jitName(map, 0x2040), undefined, 'the end is exclusive');
  assert.equal(jitName(map, 0x0fff), undefined);
  assert.equal(jitName(map, 0x3005), 'RegExp:^[0-9]+$');
  assert.equal(jitName(map, 0x4055), 'JS:*new file:///app.js:30:1', 'a later range that starts lower wins');
  assert.equal(jitName(map, 0x4090), 'JS:*new file:///app.js:30:1');
});

test("callgrind_annotate's listing is summed by function: JIT names, the compiler as one line, recursion marks dropped, what follows the listing ignored", () => {
  const listing = [
    '--------------------------------------------------------------------------------',
    'Ir                   file:function',
    '--------------------------------------------------------------------------------',
    '50,000 (50.00%)  ???:0x0000000000001010 [???]',
    '20,000 (20.00%)  ???:0x0000000000002004 [???]',
    '10,000 (10.00%)  ???:v8::internal::compiler::GraphReducer::ReduceTop() [/usr/bin/node]',
    '5,000 ( 5.00%)  ???:v8::internal::compiler::Scheduler::ScheduleLate(v8::internal::compiler::Node*) [/usr/bin/node]',
    "3,000 ( 3.00%)  ???:Builtins_StringAdd_CheckNone'2 [/usr/bin/node]",
    '2,000 ( 2.00%)  ???:Builtins_StringAdd_CheckNone [/usr/bin/node]',
    '1,000 ( 1.00%)  ???:0x0000000000009999 [???]',
    '',
    '--------------------------------------------------------------------------------',
    '-- Auto-annotated source: /src/app.c',
    '--------------------------------------------------------------------------------',
    '7,000 ( 7.00%)  int main() {',
  ].join('\n');
  const fns = byFunction(listing, readJitMap(MAP));
  assert.deepEqual(Object.fromEntries(fns), {
    'JS:*handler file:///app.js:1:1': 50_000,
    'JS:*keyedPairs file:///app.js:9:3': 20_000,
    "(V8's optimizing compiler)": 15_000,
    'Builtins_StringAdd_CheckNone [/usr/bin/node]': 5_000,
    'JIT code (unmapped 0x0000000000009999)': 1_000,
  });
});
