// Whether the running Node.js is one package.json `engines` accepts. Plain CommonJS that any Node.js runs, with
// no dependency: `bin/asyncjob` checks before it loads tsx or anything else, and the library and worker entries
// check through the same function (typed in node-engines.d.cts).
'use strict';
/* global require, module, __dirname, process */
/* eslint-disable @typescript-eslint/no-require-imports -- plain CommonJS, run by any Node.js before tsx */
const path = require('node:path');

/** Parses `X`, `X.Y` or `X.Y.Z` (missing parts 0; a leading `v` allowed) into three numbers, or throws. */
function parseVersion(text) {
  const match = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(text.trim());
  if (match === null) throw new Error(`"${text}" is not a version`);
  return [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)];
}

function compare(a, b) {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

/** One comparator of a range (`^22.12.0`, `~24.1`, `>=22`, `<27`, `22.12.0`) as a test of a version. */
function comparator(text) {
  const match = /^(\^|~|>=|<=|>|<|=)?(.+)$/.exec(text);
  const operator = match[1] ?? '=';
  const bound = parseVersion(match[2]);
  if (operator === '^' || operator === '~') {
    const upper = operator === '~' || bound[0] === 0 ? [bound[0], bound[1] + 1, 0] : [bound[0] + 1, 0, 0];
    return (v) => compare(v, bound) >= 0 && compare(v, upper) < 0;
  }
  const tests = {
    '>=': (c) => c >= 0,
    '<=': (c) => c <= 0,
    '>': (c) => c > 0,
    '<': (c) => c < 0,
    '=': (c) => c === 0,
  };
  return (v) => tests[operator](compare(v, bound));
}

/**
 * Whether `version` (`22.12.0`, `v26.1.0`) satisfies `range`, in the subset of npm's range syntax `engines` uses:
 * alternatives joined by `||`, each one or more space-separated comparators (`^`, `~`, `>=`, `<=`, `>`, `<`, `=` or
 * a bare version). Throws on anything else, so a range it cannot read is never taken as satisfied.
 */
function satisfies(version, range) {
  const parsed = parseVersion(version);
  // Every alternative is read before any is tried, so a bad one is an error even after a good one.
  const alternatives = range.split('||').map((alternative) => {
    const parts = alternative.trim().split(/\s+/).filter(Boolean);
    if (parts.length === 0) throw new Error(`"${range}" has an empty alternative`);
    return parts.map(comparator);
  });
  return alternatives.some((tests) => tests.every((test) => test(parsed)));
}

/** The `engines.node` range of asyncjob's package.json. */
function requiredNodeRange() {
  return require(path.join(__dirname, '..', 'package.json')).engines.node;
}

/**
 * The one line that refuses an unsupported Node.js (printed after `asyncjob: `), or null when `version` (default:
 * the running one) satisfies `range` (default: package.json `engines.node`).
 */
function unsupportedNodeMessage(version = process.versions.node, range = requiredNodeRange()) {
  if (satisfies(version, range)) return null;
  return `Node.js ${version.replace(/^v/, '')} is not supported: asyncjob requires Node.js ${range} (package.json engines)`;
}

module.exports = { satisfies, requiredNodeRange, unsupportedNodeMessage };
