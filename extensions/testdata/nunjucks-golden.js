// Renders every golden template with real Nunjucks and compares the result
// with the recorded output, so the Go renderer and Nunjucks are held to the
// same files. Usage:
//
//   NODE_PATH=<dir with nunjucks 3.2.4> node nunjucks-golden.js DIR [--write]
//
// DIR holds templates/NAME.njk and payloads/. NAME is "PAYLOAD--case": the
// template renders with payloads/PAYLOAD.json as its variables. The recorded
// result is templates/NAME.out, or templates/NAME.err when rendering fails.
// --write records Nunjucks' results instead of comparing. The exit status is
// 1 when any template differs.
'use strict';
const fs = require('fs');
const path = require('path');
const nunjucks = require('nunjucks');
const version = require('nunjucks/package.json').version;

const dir = process.argv[2];
const write = process.argv.includes('--write');
if (!dir) {
  console.error('usage: node nunjucks-golden.js DIR [--write]');
  process.exit(2);
}
if (version !== '3.2.4') {
  console.error(`nunjucks ${version} found, the golden corpus is checked against 3.2.4`);
  process.exit(2);
}

const env = new nunjucks.Environment(null, { autoescape: false });
// shellquote is hostforge's addition; this is its definition in JavaScript.
function quoteShell(v) {
  const s = v === undefined || v === null ? '' : String(v);
  return "'" + s.split("'").join(`'"'"'`) + "'";
}
env.addFilter('shellquote', (v) => (Array.isArray(v) ? v.map(quoteShell).join(' ') : quoteShell(v)));

const tdir = path.join(dir, 'templates');
const names = fs.readdirSync(tdir).filter((f) => f.endsWith('.njk')).sort();
let failed = 0;
for (const file of names) {
  const name = file.slice(0, -4);
  const payload = name.split('--')[0];
  const data = JSON.parse(fs.readFileSync(path.join(dir, 'payloads', payload + '.json'), 'utf8'));
  const src = fs.readFileSync(path.join(tdir, file), 'utf8');
  let out = null;
  let err = null;
  try {
    out = env.renderString(src, data);
  } catch (e) {
    err = String(e.message || e).replace(/\s+/g, ' ').trim();
  }
  const outFile = path.join(tdir, name + '.out');
  const errFile = path.join(tdir, name + '.err');
  if (write) {
    if (err === null) {
      fs.writeFileSync(outFile, out);
      if (fs.existsSync(errFile)) fs.unlinkSync(errFile);
    } else {
      fs.writeFileSync(errFile, err + '\n');
      if (fs.existsSync(outFile)) fs.unlinkSync(outFile);
    }
    continue;
  }
  if (fs.existsSync(errFile)) {
    if (err === null) {
      failed++;
      console.log(`FAIL ${name}: Nunjucks rendered ${JSON.stringify(out)}, the corpus expects an error`);
    }
  } else if (!fs.existsSync(outFile)) {
    failed++;
    console.log(`FAIL ${name}: no recorded result (${name}.out or ${name}.err)`);
  } else if (err !== null) {
    failed++;
    console.log(`FAIL ${name}: Nunjucks failed: ${err}`);
  } else {
    const want = fs.readFileSync(outFile, 'utf8');
    if (out !== want) {
      failed++;
      console.log(`FAIL ${name}:\n--- Nunjucks\n${JSON.stringify(out)}\n--- corpus\n${JSON.stringify(want)}`);
    }
  }
}
console.log(`nunjucks ${version}: ${names.length - failed} of ${names.length} templates match`);
process.exit(failed ? 1 : 0);
