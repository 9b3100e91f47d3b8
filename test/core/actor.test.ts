/**
 * Identities (D1): every spelling a person cannot tell apart from another (spaces at the edges, a no-break space,
 * case, fullwidth forms, decomposed accents) is one canonical identity; a character that hides (a zero-width space,
 * a bidirectional override, a soft hyphen, a control) or a letter from a look-alike script is refused, never
 * removed. Property tests over generated identities, then the cases of the issue, the kinds and the schemes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { actorInputSchema, actorKind, parseActor, sameActor, shownAsTyped, workflowActor } from '../../src/core/actor';

/** Characters of a generated name: ASCII letters, digits and the separators every scheme accepts. */
const NAME_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789'.split('');

const word = fc
  .array(fc.constantFrom(...NAME_CHARS), { minLength: 1, maxLength: 12 })
  .map((chars) => chars.join(''))
  .filter((w) => /[a-z]/.test(w));

const dottedName = fc
  .array(word, { minLength: 1, maxLength: 3 })
  .chain((words) =>
    fc
      .array(fc.constantFrom('.', '-', '_'), { minLength: words.length - 1, maxLength: words.length - 1 })
      .map((seps) => words.map((w, i) => (i === 0 ? w : `${seps[i - 1]}${w}`)).join('')),
  );

/** A valid identity in canonical form, of every shape an identity takes. */
const canonicalIdentity = fc.oneof(
  dottedName.map((name) => `agent:${name}`),
  fc
    .tuple(fc.constantFrom('service', 'worker', 'policy', 'temporal'), dottedName)
    .map(([scheme, name]) => `${scheme}:${name}`),
  fc.tuple(dottedName, word, fc.constantFrom('com', 'org', 'example')).map(([l, d, t]) => `${l}@${d}.${t}`),
  fc.array(word, { minLength: 1, maxLength: 3 }).map((words) => words.join(' ')),
);

/** A valid identity with accented letters (so that its NFD form differs from it). */
const accentedIdentity = fc
  .tuple(
    fc.constantFrom('agent:', ''),
    word,
    fc.constantFrom('é', 'ü', 'ñ', 'å', 'ç', 'ô'),
    word,
    fc.constantFrom('', '@example.com'),
  )
  .map(([scheme, a, accent, b, domain]) => `${scheme}${a}${accent}${b}${domain}`);

const EDGE_SPACES = [' ', '  ', '\u00A0', '\u3000', '\u2007', '\u202F'];

/** Spaces at the edges, no-break and wide spaces included. */
function padded(text: string, before: string, after: string): string {
  return `${before}${text}${after}`;
}

/** Each ASCII character of `text` at the positions chosen written in its fullwidth form (U+FF01..U+FF5E). */
function fullwidth(text: string, mask: boolean[]): string {
  return [...text]
    .map((char, i) => {
      const code = char.charCodeAt(0);
      return mask[i % mask.length] && code >= 0x21 && code <= 0x7e ? String.fromCharCode(code + 0xfee0) : char;
    })
    .join('');
}

function cased(text: string, mask: boolean[]): string {
  return [...text].map((char, i) => (mask[i % mask.length] ? char.toUpperCase() : char)).join('');
}

function canonical(text: string): string {
  const parsed = parseActor(text);
  if (parsed.kind === 'invalid') throw new Error(`${JSON.stringify(text)} is not an identity: ${parsed.message}`);
  return parsed.actor.id;
}

/** The characters that hide or steer text: each is refused wherever it is typed. */
const HIDDEN: readonly (readonly [string, string])[] = [
  ['zero-width space', '\u200B'],
  ['zero-width non-joiner', '\u200C'],
  ['zero-width joiner', '\u200D'],
  ['word joiner', '\u2060'],
  ['byte order mark', '\uFEFF'],
  ['right-to-left override', '\u202E'],
  ['left-to-right embedding', '\u202A'],
  ['right-to-left isolate', '\u2067'],
  ['soft hyphen', '\u00AD'],
  ['variation selector', '\uFE0F'],
  ['line separator', '\u2028'],
  ['NUL', '\u0000'],
  ['tab', '\t'],
  ['line feed', '\n'],
  ['carriage return', '\r'],
  ['escape', '\u001B'],
  ['delete', '\u007F'],
  ['next line (C1)', '\u0085'],
];

/** Latin letters and a Cyrillic or Greek letter drawn the same. */
const LOOK_ALIKES: Readonly<Record<string, readonly string[]>> = {
  a: ['\u0430'],
  c: ['\u0441'],
  e: ['\u0435'],
  i: ['\u0456', '\u03B9'],
  o: ['\u043E', '\u03BF'],
  p: ['\u0440', '\u03C1'],
  x: ['\u0445', '\u03C7'],
  y: ['\u0443', '\u03B3'],
  k: ['\u03BA'],
  v: ['\u03BD'],
};

describe('canonical identities (D1)', () => {
  it('D1: a canonical identity parses to itself (canonical form is idempotent)', () => {
    fc.assert(
      fc.property(canonicalIdentity, (id) => {
        expect(canonical(id)).toBe(id);
        expect(canonical(canonical(id))).toBe(canonical(id));
      }),
    );
  });

  it('D1: spaces at the edges (no-break and wide spaces too), case and fullwidth forms are one identity', () => {
    fc.assert(
      fc.property(
        canonicalIdentity,
        fc.constantFrom(...EDGE_SPACES, ''),
        fc.constantFrom(...EDGE_SPACES, ''),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 7 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
        (id, before, after, caseMask, widthMask) => {
          const variant = padded(fullwidth(cased(id, caseMask), widthMask), before, after);
          expect(canonical(variant)).toBe(id);
          expect(sameActor(variant, id)).toBe(true);
          expect(sameActor(id, variant)).toBe(true);
        },
      ),
    );
  });

  it('D1: a decomposed accent (NFD) and its composed form (NFC) are one identity', () => {
    fc.assert(
      fc.property(accentedIdentity, fc.boolean(), (id, upper) => {
        const typed = upper ? id.toUpperCase() : id;
        const decomposed = typed.normalize('NFD');
        expect(decomposed).not.toBe(typed.normalize('NFC'));
        expect(canonical(decomposed)).toBe(canonical(typed.normalize('NFC')));
        expect(canonical(decomposed)).toBe(id.normalize('NFC'));
        expect(sameActor(decomposed, id)).toBe(true);
      }),
    );
  });

  it.each(HIDDEN)('D1: a %s anywhere in an identity is refused, never removed', (_name, hidden) => {
    fc.assert(
      fc.property(canonicalIdentity, fc.nat(), (id, at) => {
        const position = at % (id.length + 1);
        const typed = `${id.slice(0, position)}${hidden}${id.slice(position)}`;
        const parsed = parseActor(typed);
        expect(parsed.kind).toBe('invalid');
        expect(sameActor(typed, id)).toBe(false);
        expect(actorInputSchema.safeParse(typed).success).toBe(false);
      }),
    );
  });

  it('D1: one Latin letter swapped for its Cyrillic or Greek look-alike is refused (mixed scripts)', () => {
    // Two Latin letters at least, so that one is left beside the look-alike.
    const withLookAlike = canonicalIdentity.filter(
      (id) => [...id].some((char) => char in LOOK_ALIKES) && (id.match(/[a-z]/g) ?? []).length >= 2,
    );
    fc.assert(
      fc.property(withLookAlike, fc.nat(), fc.nat(), (id, which, variant) => {
        const positions = [...id].flatMap((char, i) => (char in LOOK_ALIKES ? [i] : []));
        const at = positions[which % positions.length]!;
        const choices = LOOK_ALIKES[id[at]!]!;
        const spoofed = `${id.slice(0, at)}${choices[variant % choices.length]}${id.slice(at + 1)}`;
        const parsed = parseActor(spoofed);
        expect(parsed).toMatchObject({ kind: 'invalid', message: expect.stringMatching(/mixes Latin and/) });
        expect(sameActor(spoofed, id)).toBe(false);
      }),
    );
  });
});

describe('the spellings of the issue (D1, G2)', () => {
  it('D1: "agent:report-writer " and "AGENT:report-writer" are agent:report-writer', () => {
    for (const typed of ['agent:report-writer ', 'AGENT:report-writer', ' Agent:Report-Writer\u00A0']) {
      expect(parseActor(typed)).toEqual({ kind: 'ok', actor: { kind: 'agent', id: 'agent:report-writer' } });
      expect(sameActor(typed, 'agent:report-writer')).toBe(true);
    }
  });

  it('D1: "agent:report\\u200b-writer" is refused naming the hidden character, and shown as typed', () => {
    const typed = 'agent:report\u200b-writer';
    expect(parseActor(typed)).toEqual({
      kind: 'invalid',
      message: 'holds an invisible or control character (U+200B)',
    });
    expect(sameActor(typed, 'agent:report-writer')).toBe(false);
    expect(shownAsTyped(typed)).toBe('agent:report\\u{200B}-writer');
  });

  it('D1: an identity hidden at the edge (a byte order mark, a line separator, a newline) is refused, not trimmed', () => {
    for (const typed of ['agent:report-writer\uFEFF', '\uFEFFagent:report-writer', 'agent:report-writer\u2028'])
      expect(parseActor(typed).kind).toBe('invalid');
    expect(parseActor('alice@example.com\n').kind).toBe('invalid');
  });
});

describe('kinds and schemes (D1)', () => {
  it.each([
    ['agent:report-writer', 'agent'],
    ['service:billing', 'service'],
    ['svc:billing', 'service'],
    ['worker:eu-1', 'service'],
    ['policy:agents@ops', 'service'],
    ['workflow', 'service'],
    ['temporal:web-ui', 'temporal-ui'],
    ['human:alice', 'human'],
    ['user:alice@example.com', 'human'],
    ['alice@example.com', 'human'],
    ["o'brien@example.com", 'human'],
    ['Alice Smith', 'human'],
    ['иван@пример.рф', 'human'],
  ] as const)('D1: %s is a %s', (typed, kind) => {
    expect(actorKind(typed)).toBe(kind);
  });

  it.each([
    ['svc:billing', 'service:billing'],
    ['human:alice', 'alice'],
    ['user:Alice@Example.com', 'alice@example.com'],
    ['Human:Alice Smith', 'alice smith'],
  ])('D1: %s has one recorded spelling, %s: no party has two identities', (typed, canonical) => {
    expect(parseActor(typed)).toMatchObject({ kind: 'ok', actor: { id: canonical } });
    expect(sameActor(typed, canonical)).toBe(true);
  });

  it("D1: a process's name is in the scheme word's letters (no whole-script look-alike); a person's may be in any one script", () => {
    expect(parseActor('agent:отчёт')).toMatchObject({ kind: 'invalid', message: expect.stringContaining('mixes') });
    expect(parseActor('human:иван@пример.рф')).toMatchObject({ kind: 'ok', actor: { id: 'иван@пример.рф' } });
    expect(parseActor('human:workflow').kind).toBe('invalid');
  });

  it.each(['bot:x', 'mailto:alice@example.com', 'https://example.com', 'group:oncall', 'x-agent:a'])(
    'D1: the unknown scheme of %s is refused',
    (typed) => {
      const parsed = parseActor(typed);
      expect(parsed.kind).toBe('invalid');
      expect(actorKind(typed)).toBeUndefined();
    },
  );

  it.each([
    ['', 'an identity is not empty'],
    ['   ', 'an identity is not empty'],
    ['agent:report writer', '"agent:" names hold'],
    ['alice@@example.com', 'not an e-mail address'],
    ['alice  <alice@example.com>', 'not an e-mail address'],
  ])('D1: %j is not an identity (%s)', (typed, why) => {
    expect(parseActor(typed)).toMatchObject({ kind: 'invalid', message: expect.stringContaining(why) });
  });

  it('D1: an identity is at most 200 characters', () => {
    expect(parseActor(`agent:${'x'.repeat(194)}`).kind).toBe('ok');
    expect(parseActor('x'.repeat(201))).toEqual({ kind: 'invalid', message: 'longer than 200' });
  });

  it('D1: text that is not a string is not an identity; an invalid identity is the same as nothing', () => {
    expect(parseActor(42).kind).toBe('invalid');
    expect(parseActor(undefined).kind).toBe('invalid');
    expect(sameActor('agent:x\u200b', 'agent:x\u200b')).toBe(false);
  });

  it('D1: the boundary schema gives the canonical text, or refuses naming why', () => {
    expect(actorInputSchema.parse(' Alice@Example.COM ')).toBe('alice@example.com');
    const refused = actorInputSchema.safeParse('agent:report\u200b-writer');
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.message).toBe('not an identity: holds an invisible or control character (U+200B)');
  });
});

describe('a calling workflow as an identity (D1)', () => {
  it('D1: workflowActor names the namespace and the workflow ID, case kept, everything else percent-encoded', () => {
    expect(workflowActor('default', 'Order-17')).toBe('workflow:default/Order-17');
    expect(workflowActor('billing', 'a b/ü%')).toBe('workflow:billing/a%20b/%C3%BC%25');
    expect(sameActor('workflow:default/Order-17', 'workflow:default/order-17')).toBe(false);
    expect(sameActor('WORKFLOW:default/Order-17', 'workflow:default/Order-17')).toBe(true);
  });

  it('D1: a recorded workflow identity parses to itself, as a service', () => {
    for (const id of [workflowActor('ns-2', 'parent:1'), workflowActor('default', 'x'.repeat(500))]) {
      expect(parseActor(id)).toEqual({ kind: 'ok', actor: { kind: 'service', id } });
      expect(id.length).toBeLessThanOrEqual(200);
    }
    expect(workflowActor('default', 'x'.repeat(500))).toMatch(/^workflow:default\/sha256-[0-9a-f]{32}$/);
  });

  it.each(['workflow:', 'workflow:default', 'workflow:/x', 'workflow:default/a b', 'workflow:default/\u200Bx'])(
    'D1: %j is not a workflow identity',
    (typed) => {
      expect(parseActor(typed).kind).toBe('invalid');
    },
  );
});
