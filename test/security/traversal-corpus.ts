/**
 * Identifiers a caller might send to make a store write outside its root: dot segments, encoded dot segments,
 * separators of both kinds, absolute paths, a NUL byte, hidden names and an overlong ID. Every route that takes an
 * operation ID refuses each one before anything is created.
 */
export const TRAVERSAL_CORPUS: readonly string[] = [
  '..',
  '.',
  '../..',
  '../outside',
  '.hidden',
  '%2e%2e',
  '..%2f',
  '%2e%2e%2fx',
  'a/b',
  '..\\..',
  '\\',
  '/etc/passwd',
  'C:\\Windows',
  'op\u0000x',
  'x'.repeat(201),
];
