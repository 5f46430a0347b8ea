/**
 * What the shipped declarations must not show: anything marked `@internal`
 * (`stripInternal` removes such declarations; a tag left in a `.d.ts` means one it could not
 * remove: a tag in a plain comment, or on a part tsc keeps), and the hooks the queues once
 * called on the public `ZkLockClient` (it implemented `QueueHost`; private fields may keep a
 * name, as tsc declares them without a type).
 */
import ts from 'typescript';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The queues' callbacks and state, which ZkLockClient must not expose as public members. */
export const INTERNAL_HOOKS = [
  'connection',
  'nodeData',
  'maxNodesPerPath',
  'watchesLoss',
  'onIdle',
  'onLost',
  'onReleased',
  'onDirsCreated',
] as const;

/** Problems in one declaration file's text (`name` for messages). */
export function leaksIn(name: string, text: string): string[] {
  const problems: string[] = [];
  if (/@internal\b/.test(text)) problems.push(`${name}: an @internal declaration is still there`);
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.ES2022, true);
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node) && node.name?.text === 'ZkLockClient') {
      for (const clause of node.heritageClauses ?? []) {
        for (const type of clause.types) {
          if (type.expression.getText(source) === 'QueueHost') {
            problems.push(`${name}: ZkLockClient implements QueueHost`);
          }
        }
      }
      for (const member of node.members) {
        const own = member.name && ts.isIdentifier(member.name) ? member.name.text : undefined;
        const hidden = ts.getCombinedModifierFlags(member as ts.Declaration) & ts.ModifierFlags.Private;
        if (own && !hidden && (INTERNAL_HOOKS as readonly string[]).includes(own)) {
          problems.push(`${name}: ZkLockClient.${own} is public`);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return problems;
}

/** Problems in every `.d.ts` under `dir` (paths in messages relative to `dir`). */
export function internalLeaks(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.d.ts'))
    .flatMap((entry) => {
      const file = join(entry.parentPath, entry.name);
      return leaksIn(relative(dir, file), readFileSync(file, 'utf8'));
    });
}
