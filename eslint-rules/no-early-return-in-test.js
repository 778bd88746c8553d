// An `it`/`test` body that can return before its assertions passes green without testing: a
// condition that is false here (not root, no binary) ends it early and vitest counts it passed.
// Such a test says why it does not run with it.skipIf(cond) and a skip note instead. Reported:
// every `return` of the test's own function (not of functions nested in it) except a last
// top-level `return <promise>`, which ends the test only when the work it returns is done, and
// `return ctx.skip()` (also after a comma), which ends it as skipped, not passed.
const TEST_NAMES = new Set(['it', 'test']);

/** `it`, `test`, `it.only`, `it.skipIf(x)`, `test.each(t)`, … as the callee of a test's call. */
function isTestCallee(node) {
  if (node.type === 'Identifier') return TEST_NAMES.has(node.name);
  if (node.type === 'MemberExpression') return isTestCallee(node.object);
  if (node.type === 'CallExpression') return isTestCallee(node.callee);
  return false;
}

/** `ctx.skip(...)`, or a comma expression ending with one: vitest marks the test skipped. */
function isSkip(node) {
  if (!node) return false;
  if (node.type === 'SequenceExpression') return isSkip(node.expressions[node.expressions.length - 1]);
  return node.type === 'CallExpression' && node.callee.type === 'MemberExpression' && node.callee.property.name === 'skip';
}

const FUNCTION = new Set(['FunctionExpression', 'ArrowFunctionExpression', 'FunctionDeclaration']);

/** Every ReturnStatement of fn itself, not of the functions inside it. */
function ownReturns(fn) {
  const out = [];
  const visit = (node) => {
    if (!node || typeof node.type !== 'string') return;
    if (node !== fn && FUNCTION.has(node.type)) return;
    if (node.type === 'ReturnStatement') out.push(node);
    for (const key of Object.keys(node)) {
      if (key === 'parent') continue;
      const v = node[key];
      if (Array.isArray(v)) v.forEach(visit);
      else if (v && typeof v.type === 'string') visit(v);
    }
  };
  visit(fn.body);
  return out;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'disallow an it/test body that can return before an assertion (use it.skipIf with a reason)' },
    messages: {
      early:
        'this test can return before its assertions and pass without testing: skip it with it.skipIf(<condition>) and say why (skipNote), or assert on every path',
    },
    schema: [],
  },
  create(context) {
    return {
      CallExpression(node) {
        if (!isTestCallee(node.callee)) return;
        const fn = node.arguments.find((a) => FUNCTION.has(a.type));
        if (!fn || fn.body.type !== 'BlockStatement') return;
        const body = fn.body.body;
        for (const r of ownReturns(fn)) {
          const lastWithValue = r === body[body.length - 1] && r.argument !== null;
          if (!lastWithValue && !isSkip(r.argument)) context.report({ node: r, messageId: 'early' });
        }
      },
    };
  },
};
