import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Comments in our code (lib/, test/, bench/, sample-app/, scripts/) say what the code does and
 * why, never when or by which issue: history lives in git and CHANGELOG.md. Fails on an issue
 * citation (`#12`, `issue 22`, `§3`, `finding 4`, `the issue`) or a narration of earlier code
 * (`earlier versions`, `before issue`), in comments and in test titles.
 */
const HISTORY =
  /#\d+|\bissues?\s+#?\d+|§\s*\d*|\bfindings?\s+\d+|\bthe issue(?:'s)?\b|\bearlier versions?\b|\bbefore (?:issue|#|the fix)\b|\bin review\b/i;
const TEST_CALLS = new Set(['it', 'test', 'describe']);
const noHistory = {
  meta: {
    type: 'suggestion',
    messages: {
      history:
        '"{{text}}": say what the code does and why, not when or by which issue (history goes to git and CHANGELOG.md)',
    },
    schema: [],
  },
  create(context) {
    const report = (node, loc, text) => {
      const found = HISTORY.exec(text);
      if (found) context.report({ node, loc, messageId: 'history', data: { text: found[0] } });
    };
    return {
      Program(program) {
        for (const comment of context.sourceCode.getAllComments()) {
          report(program, comment.loc, comment.value);
        }
      },
      CallExpression(call) {
        let callee = call.callee;
        while (callee.type === 'MemberExpression' || callee.type === 'CallExpression') {
          callee = callee.type === 'MemberExpression' ? callee.object : callee.callee;
        }
        const title = call.arguments[0];
        if (callee.type !== 'Identifier' || !TEST_CALLS.has(callee.name) || !title) return;
        if (title.type === 'Literal' && typeof title.value === 'string') {
          report(title, title.loc, title.value);
        } else if (title.type === 'TemplateLiteral') {
          report(title, title.loc, title.quasis.map((q) => q.value.cooked).join(''));
        }
      },
    };
  },
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      'no-console': 'off',
    },
  },
  {
    files: ['lib/**/*.ts'],
    rules: { 'no-console': 'error' },
  },
  {
    files: ['{lib,test,bench,sample-app,scripts}/**/*.ts'],
    // design-citations parses citations of docs/design.md (`#19 §4`): they are its data.
    ignores: ['scripts/doc-snippets/design-citations*.ts'],
    plugins: { project: { rules: { 'no-history': noHistory } } },
    rules: { 'project/no-history': 'error' },
  },
  {
    files: ['lib/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['@nestjs/*', '../nest/*', '../../nest/*'] }],
    },
  },
);
