// The C0 driver: run by the mounted node as ``node -e <this file's text> <mode> <spec-json>``
// (``pytest_reb/pyramid/c0_imports.py`` reads it), never by a tool of the image.
// ``survey`` lists the checkout's top level, reads its pyright config and asks the
// interpreter for ``sys.path``; ``analyse`` writes the configs into a fresh scratch
// directory, runs the binding check and the JSON run side by side (the JSON run through
// ``c0_checker.js``, which the host writes there too), keeps one diagnostic
// per missing top-level name (exec output is a 64 KiB tail; the count needs no more) and
// removes the scratch directory.
'use strict';
const fs = require('fs'), path = require('path'), cp = require('child_process');
const zlib = require('zlib');
const [mode, raw] = process.argv.slice(1);
const spec = JSON.parse(raw);
const name = (d) => new RegExp(spec.import_pattern).exec(String(d.message));
const emit = (o) => process.stdout.write('REB_C0 ' + JSON.stringify(o) + '\n');
const tail = (s, n) => (s.length > n ? s.slice(-n) : s);
const env = {...process.env, PYTHONDONTWRITEBYTECODE: '1'};

// Each command is its own process group, killed whole at its deadline; a grandchild that
// keeps the pipes open cannot hold the driver past it.
function run(argv, opts) {
  return new Promise((resolve) => {
    const out = [], err = [], started = Date.now();
    let child, timer, grace, timedOut = false, finished = false;
    const done = (rc, signal, error) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      clearTimeout(grace);
      if (child) { child.stdout.destroy(); child.stderr.destroy(); }
      resolve({rc, signal, error, timed_out: timedOut, seconds: (Date.now() - started) / 1000,
               stdout: Buffer.concat(out).toString('utf8'),
               stderr: Buffer.concat(err).toString('utf8')});
    };
    try {
      child = cp.spawn(argv[0], argv.slice(1), {env, cwd: opts.cwd, detached: true});
    } catch (e) {
      done(null, null, String(e.code || e));
      return;
    }
    timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid, 'SIGKILL'); } catch (e) { /* already gone */ }
    }, opts.timeout);
    child.stdout.on('data', (b) => out.push(b));
    child.stderr.on('data', (b) => err.push(b));
    child.on('error', (e) => done(null, null, String(e.code || e)));
    child.on('close', (rc, signal) => done(rc, signal, null));
    child.on('exit', (rc, signal) => { grace = setTimeout(() => done(rc, signal, null), 3000); });
  });
}

function readText(file, limit) {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text.length > limit ? {text: text.slice(0, limit), truncated: true} : {text};
  } catch (e) { return null; }
}

function pyrightTables(text) {
  const keep = [];
  let inside = false;
  for (const line of text.split(/\r?\n/)) {
    const m = line.match(/^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$/);
    if (m) inside = m[1] === 'tool.pyright' || m[1].startsWith('tool.pyright.');
    if (inside) keep.push(line);
  }
  return keep.length ? keep.join('\n') : null;
}

async function survey() {
  const res = {checkout: {exists: false, entries: []}, pyright_exists: fs.existsSync(spec.pyright)};
  try {
    for (const name of fs.readdirSync(spec.checkout).sort().slice(0, 5000)) {
      let st;
      try { st = fs.statSync(path.join(spec.checkout, name)); } catch (e) { continue; }
      if (!st.isDirectory()) { res.checkout.entries.push({name, dir: false}); continue; }
      let inner = [];
      try { inner = fs.readdirSync(path.join(spec.checkout, name)); } catch (e) { /* unreadable */ }
      res.checkout.entries.push({name, dir: true, init: inner.includes('__init__.py'),
                                 py: inner.some((n) => n.endsWith('.py'))});
    }
    res.checkout.exists = true;
  } catch (e) { res.checkout.error = String(e.code || e); }
  res.checkout.pyrightconfig = readText(path.join(spec.checkout, 'pyrightconfig.json'), 48000);
  const pyproject = readText(path.join(spec.checkout, 'pyproject.toml'), 1 << 24);
  res.checkout.pyproject_pyright = pyproject && pyrightTables(pyproject.text);
  const py = await run([spec.python, '-c', spec.snippet], {cwd: '/', timeout: spec.timeout_ms});
  res.python = {...py, stdout: tail(py.stdout, 16000), stderr: tail(py.stderr, 4000)};
  emit(res);
}

function reduce(text) {
  let data;
  try { data = JSON.parse(text); } catch (e) { return null; }
  if (!data || typeof data !== 'object' || !Array.isArray(data.generalDiagnostics)) return null;
  const first = new Map(), counts = {};
  for (const d of data.generalDiagnostics) {
    if (!d || !spec.rules.includes(d.rule)) continue;
    counts[d.rule] = (counts[d.rule] || 0) + 1;
    const m = name(d);
    if (m && !first.has(d.rule + ' ' + m[1])) {
      const line = d.range && d.range.start ? d.range.start.line : null;
      first.set(d.rule + ' ' + m[1], {file: d.file, message: d.message, rule: d.rule,
                                      range: {start: {line}}});
    }
  }
  return {version: data.version, summary: data.summary, generalDiagnostics: [...first.values()],
          reduced: {rule_diagnostics: counts, all_diagnostics: data.generalDiagnostics.length}};
}

// What the interpreter would load at run time, as opposed to what pyright resolves: a stub
// (``.pyi``) is never code, and neither is a file Python would find but cannot run.  ``load``
// follows Python's own finders: built-in modules first, then each directory of the import path
// in order (the checkout first, where a script runs from), and in each the ``FileFinder``'s
// order: a package ``n/`` with an ``__init__`` of a loader's suffix (extension suffixes, ``.py``,
// ``.pyc``, in that order), else a module ``n`` of those suffixes; the first one found is what
// ``import n`` runs, whatever later directories hold.  Folders ``n/`` with no ``__init__`` are
// namespace portions, used only when no directory has a module or package; they count as code
// when they hold a module that is (``__pycache__`` does not count: Python never imports from it
// by path).  A ``.py`` is code; a ``.pyc`` is code when its header carries this interpreter's
// magic number and a code object follows; an extension when its name has one of this
// interpreter's extension suffixes (found so) and it is an ELF object.
// Stub entries, after PEP 561 and pyright: ``n.pyi``, a ``n-stubs/`` package (partial or not:
// ``partial`` only tells pyright to look further, at a package that must still exist), and a
// package ``n/`` with ``.pyi`` files and no module that is code, which pyright resolves silently.
const RUNTIME = /\.(py|pyc|so|pyd)$/;
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const roots = () => [...(spec.checkout ? [spec.checkout] : []), ...spec.sys_path];
const listing = (dir) => { try { return fs.readdirSync(dir); } catch (e) { return []; } };
const isDir = (p) => { try { return fs.statSync(p).isDirectory(); } catch (e) { return false; } };
const isFile = (p) => { try { return fs.statSync(p).isFile(); } catch (e) { return false; } };
const suffixes = () => [...(spec.ext_suffixes && spec.ext_suffixes.length ? spec.ext_suffixes
  : ['.so']), '.py', '.pyc'];

function head(file, n) {
  let fd = null;
  try {
    fd = fs.openSync(file, 'r');
    const buf = Buffer.alloc(n);
    return buf.subarray(0, fs.readSync(fd, buf, 0, n, 0));
  } catch (e) { return null; } finally { if (fd !== null) fs.closeSync(fd); }
}

// Whether Python would run code from ``file``, a module found by its suffix.
function isCode(file) {
  if (!isFile(file)) return false;
  if (file.endsWith('.py')) return true;
  if (file.endsWith('.pyc')) {
    const b = head(file, 17);  // 16 bytes of header, then marshal's TYPE_CODE ('c', maybe FLAG_REF)
    return b !== null && b.length === 17 && (b[16] & 0x7f) === 0x63
      && (!spec.magic || b.subarray(0, 4).toString('hex') === spec.magic);
  }
  const b = head(file, 4);
  return b !== null && b.length === 4 && b.toString('latin1') === '\x7fELF';
}
const isStub = (file) => file.endsWith('.pyi') && isFile(file);
const isRuntime = (file) => RUNTIME.test(file) && isCode(file);

// Whether a package directory holds a file that ``test`` accepts (a module that is code, or a
// stub), bounded in depth and entries so an image cannot make the driver walk forever.
function holds(dir, test, depth, budget = {left: 20000}) {
  const entries = listing(dir);
  for (const e of entries) {
    if (--budget.left < 0) return false;
    if (test(path.join(dir, e))) return true;
  }
  if (depth <= 0) return false;
  return entries.some((e) => e !== '__pycache__' && IDENT.test(e) && isDir(path.join(dir, e))
    && holds(path.join(dir, e), test, depth - 1, budget));
}

// What ``import n`` would run: {file, code} of the first module or regular package on the
// path, else of the namespace package, else null.
function load(n) {
  if ((spec.builtins || []).includes(n)) return {file: '<built-in>', code: true};
  const portions = [];
  for (const dir of roots()) {
    const pkg = path.join(dir, n);
    if (isDir(pkg)) {
      for (const s of suffixes()) {
        const f = path.join(pkg, '__init__' + s);
        if (isFile(f)) return {file: f, code: isCode(f)};
      }
      portions.push(pkg);
    }
    for (const s of suffixes()) {
      const f = path.join(dir, n + s);
      if (isFile(f)) return {file: f, code: isCode(f)};
    }
  }
  return portions.length ? {file: portions[0], code: portions.some((p) => holds(p, isRuntime, 8))}
    : null;
}

// Top-level names that have runtime code on the interpreter's import path or in the checkout.
function present(names) {
  return names.filter((n) => { const l = load(n); return l !== null && l.code; });
}

// Names that resolve to stubs only: a stub entry somewhere on the import path, runtime code
// nowhere.  pyright reports no diagnostic for a stub-only package of the environment, so the
// names are looked for here and kept if an analysed file imports them.
function stubOnly() {
  const found = new Set();
  for (const dir of spec.sys_path) {
    for (const e of listing(dir)) {
      const n = e.endsWith('-stubs') ? e.slice(0, -6) : e.endsWith('.pyi') ? e.slice(0, -4) : e;
      if (!IDENT.test(n)) continue;
      const p = path.join(dir, e);
      if (e !== n ? isFile(p) || holds(p, isStub, 8)  // n.pyi, n-stubs/
        : isDir(p) && !holds(p, isRuntime, 8) && holds(p, isStub, 8)) found.add(n);
    }
  }
  const have = new Set(present([...found]));
  return [...found].filter((n) => !have.has(n)).sort();
}

// Names whose module Python would find first but cannot run (a ``.pyc`` of another interpreter
// or none, an extension that is no ELF object): name -> that file.  pyright reads neither kind,
// so it resolves such a name to a stub or to a later directory's package without a word.
function notCode() {
  const found = {};
  const compiled = suffixes().filter((s) => s !== '.py');
  for (const dir of roots()) {
    for (const e of listing(dir)) {
      const s = compiled.find((x) => e.endsWith(x));
      const n = s ? e.slice(0, -s.length) : e;
      if (!IDENT.test(n) || n in found) continue;
      if (!s && !compiled.some((x) => isFile(path.join(dir, e, '__init__' + x)))) continue;
      const l = load(n);
      if (l !== null && !l.code && isFile(l.file)) found[n] = l.file;
    }
  }
  const imported = new Set(importedBy(Object.keys(found).sort()));
  return Object.fromEntries(Object.entries(found).filter(([n]) => imported.has(n)));
}

// The Python files of the config's ``include``: files as they are, folders walked (a run
// without the pinned tree includes its targets), the official exclusions skipped, bounded.
const SKIP = new Set(['.git', '__pycache__', '.venv', 'venv', 'node_modules', 'build', 'dist',
                      'build_output']);
function sources(entries, budget = {left: 50000}) {
  const out = [];
  for (const p of entries) {
    if (--budget.left < 0) break;
    if (p.endsWith('.py') && isFile(p)) out.push(p);
    else if (!SKIP.has(path.basename(p)) && isDir(p)) {
      out.push(...sources(listing(p).sort().map((e) => path.join(p, e)), budget));
    }
  }
  return out;
}

// Which of ``names`` the analysed files import (``import n``, ``import a, n.b``, ``from n``):
// a line scan of the files the config includes, only for the few stub-only names.
function importedBy(names) {
  if (!names.length) return [];
  let include = [];
  try {
    include = JSON.parse(fs.readFileSync(path.join(spec.scratch, 'pyrightconfig.json'),
                                         'utf8')).include || [];
  } catch (e) { return []; }
  const lead = '(?:[\\w.]+(?:[ \\t]+as[ \\t]+\\w+)?[ \\t]*,[ \\t]*)*';  // "import a as b, "
  const rules = names.map((n) => [n, new RegExp('^[ \\t]*(?:from[ \\t]+' + n + '(?:[ \\t.]|$)'
    + '|import[ \\t]+' + lead + n + '(?:[ \\t.,]|$))', 'm')]);
  const hit = new Set();
  for (const file of sources(include.filter((rel) => typeof rel === 'string')
    .map((rel) => path.resolve(spec.scratch, rel)))) {
    const text = readText(file, 1 << 22);
    if (!text) continue;
    for (const [n, re] of rules) if (!hit.has(n) && re.test(text.text)) hit.add(n);
    if (hit.size === names.length) break;
  }
  return [...hit].sort();
}

// What the environment's metadata says provides each name that may count as missing (the
// failure's hint), asked in this exec rather than in one more: only for those names, so the
// answer stays small.  The names are a superset of what the host counts (``spec.count_rules``
// are the rules of its verdict; strict adds the stub-only names).
async function distributions(json) {
  const names = new Set(json.generalDiagnostics.filter((d) => spec.count_rules.includes(d.rule))
    .map((d) => name(d)).filter((m) => m).map((m) => m[1]));
  if (spec.count_rules.includes(spec.source_rule)) {
    json.stub_only.forEach((n) => names.add(n));
    Object.keys(json.not_code).forEach((n) => names.add(n));
  }
  if (!names.size) return null;
  const res = await run([spec.python, '-c', spec.distributions, ...[...names].sort()],
                        {cwd: process.cwd(), timeout: spec.distributions_timeout_ms});
  return {rc: res.rc, timed_out: res.timed_out, stdout: tail(res.stdout, 16000)};
}

// The interpreter's import folders as pyright resolves through them, without their code: the
// same folders and names, every module, stub and extension an empty file, ``py.typed`` as it
// is (``partial`` tells pyright to look further).  pyright then finds every import where it
// would find it in the real folders, and reads none of the library code it would otherwise
// parse and bind for types (``import transformers`` alone: 2,800 files, most of a real image's
// C0).  Returns real folder -> mirror folder, or null past the entry budget (pyright then reads
// the real folders).  The checkout is never mirrored: pyright analyses its files.
const MIRRORED = /\.(py|pyi|so|pyd|dylib)$/;
function mirror(root) {
  const budget = {left: spec.mirror_entries || 0};
  const map = {};
  const inCheckout = (d) => spec.checkout && (d === spec.checkout
    || d.startsWith(spec.checkout.replace(/\/$/, '') + '/'));
  const copy = (src, dest, depth) => {
    fs.mkdirSync(dest);
    let entries;
    try { entries = fs.readdirSync(src, {withFileTypes: true}); } catch (e) { return true; }
    for (const e of entries) {
      if (--budget.left < 0) return false;
      const s = path.join(src, e.name), d = path.join(dest, e.name);
      let dir = e.isDirectory(), file = e.isFile();
      if (e.isSymbolicLink()) {
        try { const st = fs.statSync(s); dir = st.isDirectory(); file = st.isFile(); }
        catch (err) { continue; }  // a broken link: pyright finds nothing there either
      }
      if (dir) {
        if (depth >= 48 || !copy(s, d, depth + 1)) return false;
      } else if (file && e.name === 'py.typed') {
        try { fs.copyFileSync(s, d); } catch (err) { fs.writeFileSync(d, ''); }
      } else if (file && MIRRORED.test(e.name)) {
        fs.closeSync(fs.openSync(d, 'w'));
      }
    }
    return true;
  };
  for (const [i, dir] of spec.sys_path.entries()) {
    if (inCheckout(dir) || dir in map) continue;
    if (!copy(dir, path.join(root, String(i)), 0)) return null;
    map[dir] = path.join(root, String(i));
  }
  return map;
}

// Where the mirror goes: the container's /dev/shm, a tmpfs (tens of thousands of empty files
// take 0.4 s there and 15 s in the image's writable layer), else beside the scratch folder.
// Named after the scratch folder (the host's random name), so a host that killed us finds it.
function mirrorRoot() {
  const shm = '/dev/shm/' + path.basename(spec.scratch) + '-m';
  try { fs.mkdirSync(shm, {mode: 0o700}); return shm; } catch (e) { /* none, read-only, taken */ }
  fs.mkdirSync(spec.scratch + '-m', {mode: 0o700});
  return spec.scratch + '-m';
}

// The interpreter pyright runs when the mirror stands in: the report's own, asked pyright's
// questions as they come, its import folders in the answer swapped for their mirrors.
function mirrorInterpreter(dir, map) {
  const file = path.join(dir, 'python');
  fs.writeFileSync(file, '#!' + process.execPath + '\n' + [
    "'use strict';",
    "const cp = require('child_process');",
    'const map = ' + JSON.stringify(map) + ';',
    'const res = cp.spawnSync(' + JSON.stringify(spec.python) + ', process.argv.slice(2),',
    "  {encoding: 'utf8', maxBuffer: 1 << 26});",
    "let out = res.stdout || '';",
    'try {',
    '  const data = JSON.parse(out);',
    '  if (data && Array.isArray(data.path)) {',
    '    data.path = data.path.map((p) => map[p] || p);',
    '    out = JSON.stringify(data);',
    '  }',
    '} catch (e) { /* not the search-path question: passed on as it is */ }',
    'process.stdout.write(out);',
    "process.stderr.write(res.stderr || '');",
    'process.exit(res.status === null ? 1 : res.status);'].join('\n') + '\n',
  {mode: 0o700});
  return file;
}

// The mirror folders in pyright's --verbose output named by the real ones they stand for.
function unmirrored(text, map) {
  let out = text;
  for (const [real, fake] of Object.entries(map).sort((a, b) => b[1].length - a[1].length)) {
    out = out.split(fake).join(real);
  }
  return out;
}

// Which checker the main run had (``c0_checker.js``'s last stderr line, taken out of it):
// ``imports`` or ``full: <why>``; null where it said nothing (it did not get that far).
function checkerSaid(res) {
  const m = /\n?REB_C0_CHECKER ([^\n]*)\n?$/.exec(res.stderr);
  if (!m) return null;
  res.stderr = res.stderr.slice(0, m.index);
  return m[1];
}

function header(text) {
  const lines = [];
  for (const line of text.split('\n')) {
    if (/^(Found \d+ source file|No source files found|pyright \d)/.test(line)) break;
    lines.push(line);
  }
  return tail(lines.join('\n'), 16000);
}

async function analyse() {
  let root = null;
  fs.mkdirSync(spec.scratch, {mode: 0o700});
  try {
    for (const [name, text] of Object.entries(spec.files)) {
      // a long file comes gzipped ({gz: base64}): the spec is one argv string
      fs.writeFileSync(path.join(spec.scratch, name), typeof text === 'string' ? text
        : zlib.gunzipSync(Buffer.from(text.gz, 'base64')));
    }
    const opts = (t) => ({cwd: spec.scratch, timeout: t});
    const started = Date.now();
    // a relative interpreter pyright cannot run (it resolves through typeshed alone): as it is
    root = spec.mirror_entries && path.isAbsolute(spec.python) ? mirrorRoot() : null;
    const map = root ? mirror(root) : null;
    const mirrored = {folders: map ? Object.keys(map).length : 0, over_budget: !!spec.mirror_entries
      && map === null, seconds: (Date.now() - started) / 1000};
    const fake = map ? mirrorInterpreter(spec.scratch, map) : null;  // /dev/shm is noexec
    const bound = (args) => {
      const i = args.indexOf('--pythonpath');
      return !fake || i < 0 ? args : [...args.slice(0, i + 1), fake, ...args.slice(i + 2)];
    };
    const [probe, main] = await Promise.all([
      run([process.execPath, spec.pyright, ...bound(spec.binding_args)],
          opts(spec.binding_timeout_ms)),
      run([process.execPath, ...(spec.checker ? [path.join(spec.scratch, spec.checker)] : []),
           spec.pyright, ...bound(spec.main_args)], opts(spec.main_timeout_ms))]);
    main.checker = checkerSaid(main);
    if (map) {  // plain text; the JSON names checkout files only, and stays as pyright wrote it
      probe.stdout = unmirrored(probe.stdout, map);
      main.stderr = unmirrored(main.stderr, map);
    }
    const json = reduce(main.stdout);
    if (json) {
      const stubHits = json.generalDiagnostics.filter((d) => d.rule === spec.source_rule)
        .map((d) => name(d)[1]);
      json.source_present = present(stubHits);
      json.stub_only = importedBy(stubOnly());
      json.not_code = notCode();
    }
    const dists = json ? await distributions(json) : null;
    const res = {
      mirror: mirrored,
      binding: {...probe, stdout: header(probe.stdout), stderr: tail(probe.stderr, 4000)},
      main: {...main, json, stdout: json ? '' : main.stdout.slice(0, 2000) + '\n...\n' +
             tail(main.stdout, 2000), stderr: tail(main.stderr, 4000)},
      ...(dists ? {distributions: dists} : {})};
    // Exec output is a 64 KiB tail: past the limit keep only the names, then fewer of them.
    const size = () => JSON.stringify(res).length;
    if (json && size() > 60000) {
      json.generalDiagnostics = json.generalDiagnostics.map((d) => ({
        rule: d.rule, message: 'Import "' + name(d)[1] + '"'}));
      json.reduced.compact = true;
      while (size() > 60000 && json.generalDiagnostics.length) {
        json.generalDiagnostics.length = Math.floor(json.generalDiagnostics.length * 0.9);
        json.reduced.truncated = true;
      }
    }
    emit(res);
  } finally {
    fs.rmSync(spec.scratch, {recursive: true, force: true});
    if (root) fs.rmSync(root, {recursive: true, force: true});
  }
}

(mode === 'survey' ? survey() : analyse()).catch((e) => {
  emit({driver_error: String(e && e.stack || e)});
});
