// Whether the running Node.js is one package.json `engines` accepts, by npm's own range grammar (the `semver`
// package, which runs on any Node.js): `bin/asyncjob` checks before it loads tsx or anything else, and the library
// and worker entries check through the same function (typed in node-engines.d.cts).
'use strict';
/* global require, module, __dirname, process */
/* eslint-disable @typescript-eslint/no-require-imports -- plain CommonJS, run by any Node.js before tsx */
const path = require('node:path');
const semver = require('semver');

/**
 * Whether `version` (`22.12.0`, `v26.1.0`) satisfies `range` in npm's range syntax. Throws on a version or range it
 * cannot read, and on an empty `||` alternative (which npm reads as "any version"), so a range it cannot read is
 * never taken as satisfied.
 */
function satisfies(version, range) {
  const parsed = semver.parse(version.trim(), { loose: false });
  if (parsed === null) throw new Error(`"${version}" is not a version`);
  if (range.split('||').some((alternative) => alternative.trim() === ''))
    throw new Error(`"${range}" has an empty alternative`);
  let parsedRange;
  try {
    parsedRange = new semver.Range(range);
  } catch {
    throw new Error(`"${range}" is not a version range`);
  }
  return parsedRange.test(parsed);
}

/**
 * The exit status of an unsupported Node.js: `ASYNCJOB_ERR_NODE_UNSUPPORTED`'s in the registry (src/core/codes.ts),
 * which this file, run before tsx, cannot read; test/package/node-engines.test.ts holds the two equal.
 */
const UNSUPPORTED_NODE_EXIT_STATUS = 2;

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

module.exports = { satisfies, requiredNodeRange, unsupportedNodeMessage, UNSUPPORTED_NODE_EXIT_STATUS };
