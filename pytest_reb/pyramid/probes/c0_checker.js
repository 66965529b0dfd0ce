// C0's pyright, its checker limited to import statements: run by the C0 driver as
// ``node <this file> <pyright's index.js> <pyright's arguments>``, never by a tool of the image.
//
// Why: C0 counts two rules. ``reportMissingImports`` comes from pyright's binder, which runs
// whole; ``reportMissingModuleSource`` from its checker's visits of a ``ModuleName`` and of an
// ``ImportFromAs``.  The rest of the checker evaluates the type of every expression of every
// file (``typeCheckingMode: off`` only drops the diagnostics), which was 80% of C0 on a real
// checkout (InternEvo: check 17.3 s of 21.8 s).  Here the checker's walk still reaches every
// node through its own ``walk`` (which suppresses what lies in unreachable code), but only
// those two node types are visited; the rest are descended into without evaluation.  Whether
// a module-source diagnostic is kept (its node reachable, its function not ``no_type_check``,
// its rule's level in the file) is decided where pyright adds it, as in a full run.  In
// ``ImportFromAs`` the checker asks the imported symbol's type only to report its deprecation
// (not counted): that one question is answered "unknown", sparing the evaluation of the
// imported module it would start.
//
// The patch is applied when pyright's own bundle defines its ``Checker``: the chunk's module
// factories are wrapped as node loads them.  Where the shape differs from what this expects
// (another pyright), nothing is patched and pyright runs whole, and a file whose checker
// lacks the fields this reads, or whose walk throws, is checked whole; stderr's last line says
// which: ``REB_C0_CHECKER imports`` or ``REB_C0_CHECKER full: <why>`` (the last such why).
'use strict';
const Module = require('module');
const [index, ...args] = process.argv.slice(2);
const VISITED = ['ImportFromAs', 'ModuleName'];
let state = 'full: no Checker in the bundle';
let patched = false;  // the Checker's prototype is patched once (``state`` may say a file fell back)

function patch(Checker) {
  const P = Checker.prototype;
  if (typeof P.visit !== 'function' || typeof P.check !== 'function'
      || typeof P.walk !== 'function') {
    state = 'full: the Checker has no check/walk/visit';
    return;
  }
  const types = new Set();
  for (const m of P.visit.toString().matchAll(/case (\d+):return this\.visit(\w+)\(\w+\)/g)) {
    if (VISITED.includes(m[2])) types.add(Number(m[1]));
  }
  if (types.size !== VISITED.length) {
    state = 'full: the node types of ' + VISITED.join(', ') + ' not found';
    return;
  }
  const visit = P.visit, whole = P.check;
  P.check = function check() {
    const moduleNode = this._moduleNode, evaluator = this._evaluator;
    if (!moduleNode || !moduleNode.d || !Array.isArray(moduleNode.d.statements)
        || !evaluator || typeof evaluator.getType !== 'function') {
      state = 'full: the Checker has not the fields this expects';
      return whole.call(this);
    }
    const getType = evaluator.getType;
    this.visit = function visitImportsOnly(node) {
      if (!types.has(node.nodeType)) return true;  // descend, evaluate nothing
      evaluator.getType = () => undefined;
      try { return visit.call(this, node); } finally { evaluator.getType = getType; }
    };
    let failed = null;
    try {
      for (const statement of moduleNode.d.statements) this.walk(statement);
    } catch (e) {
      failed = e;
    } finally {
      delete this.visit;
    }
    if (failed === null) return undefined;
    // checked whole instead (pyright's sink keeps one of each diagnostic already added)
    state = 'full: ' + String(failed && failed.message || failed).slice(0, 200);
    return whole.call(this);
  };
  patched = true;
  state = 'imports';
}

const load = Module._load;
Module._load = function loadAndPatch(request) {
  const out = load.apply(this, arguments);
  if (/pyright-internal(\.js)?$/.test(request) && out && out.modules && !out.__rebChecker) {
    out.__rebChecker = true;
    for (const id of Object.keys(out.modules)) {
      const factory = out.modules[id];
      out.modules[id] = function wrapped(module, exports, require) {
        const res = factory.call(this, module, exports, require);
        const made = module.exports;
        if (made && typeof made.Checker === 'function' && !patched) {
          patch(made.Checker);
        }
        return res;
      };
    }
  }
  return out;
};

process.on('exit', () => process.stderr.write('\nREB_C0_CHECKER ' + state + '\n'));
process.argv = [process.argv[0], index, ...args];
require(index);
