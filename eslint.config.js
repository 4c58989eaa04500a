// Flat config: typescript-eslint's recommended rules, plus the habits we keep (no `any`, no default exports).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'coverage/**', 'dist/**', 'dist-*/**', 'sdk/dist/**', 'sdk/src/schema.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // Plain JavaScript run by Node (build scripts, tool configs): Node's globals.
  {
    files: ['**/*.{js,mjs,cjs}'],
    languageOptions: { globals: { process: 'readonly', module: 'writable', require: 'readonly', console: 'readonly', __dirname: 'readonly' } },
  },
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' }],
      'max-lines': ['warn', { max: 400, skipBlankLines: true, skipComments: true }],
    },
  },
);
