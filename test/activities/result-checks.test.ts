/** R2, R3: counting the records of a CSV result as RFC 4180 defines them (quoted line ends are inside a record). */
import { describe, expect, it } from 'vitest';
import { countCsvRecords } from '../../src/activities/result-checks';

describe('R2: CSV record counting', () => {
  it.each([
    ['a header and three rows', 'id,amount\n1,10\n2,20\n3,30\n', true, 3],
    ['no header declared: every line is a record', '1,10\n2,20\n', false, 2],
    ['CRLF line ends and no final line end', 'id\r\n1\r\n2', true, 2],
    ['a quoted field holding line ends is one record', 'id,note\n1,"line one\nline two"\n2,plain\n', true, 2],
    ['blank lines are not records', 'id\n\n1\n\n', true, 1],
    ['an empty result has no records', '', true, 0],
    ['a header alone has no records', 'id,amount\n', true, 0],
  ])('%s', (_title, text, header, expected) => {
    expect(countCsvRecords(text, header)).toBe(expected);
  });
});
