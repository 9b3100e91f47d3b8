/**
 * Identities (who started, asked, approved, cancelled): one `Actor` type with one canonical text form, parsed at
 * every boundary (CLI, client, MCP, signals and updates, policy files), so two spellings of one identity are one
 * identity. Canonical means: Unicode NFKC, case-folded (every scheme we use is case-insensitive: e-mail addresses
 * as mail systems treat them, `agent:` names, host and service names), trimmed, inner white space collapsed, and
 * refused outright when it holds a control, format or otherwise invisible character (a zero-width space, a
 * bidirectional override, a variation selector) or mixes look-alike scripts (Latin with Cyrillic or Greek).
 * Comparisons are between canonical forms only ({@link sameActor}).
 *
 * Hand-written because no maintained package gives this profile (PRECIS, RFC 8264, is close; its npm ports are
 * unmaintained): it is a few regular expressions over the Unicode properties JavaScript already knows. Pure and
 * deterministic: used by workflow code.
 */
import { z } from 'zod';
import { lazySchema } from './lazy-schema';
import { sha256HexOfText } from './sha256';

/** What kind of party an identity names. */
export type ActorKind = 'human' | 'agent' | 'service' | 'temporal-ui';

/** A canonical identity: its kind and its one text form, the only form ever recorded or compared. */
interface Actor {
  kind: ActorKind;
  /** The canonical text, e.g. `alice@example.com`, `agent:report-writer`, `service:billing`. */
  id: string;
}

/** The longest canonical identity. */
const MAX_ACTOR_LENGTH = 200;

/**
 * Schemes, the kind each names and the one spelling it is recorded with: `svc:` is `service:`, and `human:` and
 * `user:` are dropped (a person is their e-mail address or name), so no party has two identities. `temporal:` is
 * Temporal itself acting for someone its history names (the Web UI's Request Cancellation); `workflow` and
 * `worker:`, `policy:` are asyncjob's own processes and policies. `workflow:<namespace>/<ID>` (a calling workflow)
 * is parsed before folding, see {@link workflowActor}.
 */
const SCHEMES: Readonly<Record<string, { kind: ActorKind; recordedAs: string | null }>> = {
  agent: { kind: 'agent', recordedAs: 'agent' },
  service: { kind: 'service', recordedAs: 'service' },
  svc: { kind: 'service', recordedAs: 'service' },
  worker: { kind: 'service', recordedAs: 'worker' },
  policy: { kind: 'service', recordedAs: 'policy' },
  temporal: { kind: 'temporal-ui', recordedAs: 'temporal' },
  human: { kind: 'human', recordedAs: null },
  user: { kind: 'human', recordedAs: null },
};

/** Bare names of asyncjob's own processes. */
const SERVICE_WORDS: ReadonlySet<string> = new Set(['workflow']);

/** Characters that change nothing visible or steer the display: never part of an identity. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cs}\p{Default_Ignorable_Code_Point}]/u;

/** What a scheme's name may hold: letters, digits and a few separators; no spaces. */
const SCHEMED_NAME = /^[\p{L}\p{M}\p{N}._@+/:-]+$/u;

/** An e-mail address as deciders write it: one `@`, no spaces. */
const EMAIL = /^[\p{L}\p{M}\p{N}._%+'-]+@[\p{L}\p{M}\p{N}.-]+$/u;

/** A bare human name: letters, digits, `.`, `_`, `-`, `'` and single spaces. */
const BARE_NAME = /^[\p{L}\p{M}\p{N}._'-]+(?: [\p{L}\p{M}\p{N}._'-]+)*$/u;

/** The scripts whose letters are mistaken for one another; an identity uses letters of at most one of them. */
const LOOK_ALIKE_SCRIPTS: ReadonlyArray<readonly [string, RegExp]> = [
  ['Latin', /\p{Script=Latin}/u],
  ['Cyrillic', /\p{Script=Cyrillic}/u],
  ['Greek', /\p{Script=Greek}/u],
  ['Armenian', /\p{Script=Armenian}/u],
  ['Cherokee', /\p{Script=Cherokee}/u],
  ['Coptic', /\p{Script=Coptic}/u],
];

/**
 * A Temporal workflow acting as a caller (a parent workflow, a Nexus operation's caller):
 * `workflow:<namespace>/<workflow ID>`, the ID percent-encoded outside `[A-Za-z0-9._@+/:-]`. Case is kept:
 * Temporal's namespaces and workflow IDs are case-sensitive, so `Order-1` and `order-1` are two callers.
 */
const WORKFLOW_CALLER = /^workflow:([A-Za-z0-9][A-Za-z0-9._-]*)\/([A-Za-z0-9._@+/:%-]+)$/i;

/** A workflow ID byte outside this set is percent-encoded in a `workflow:` identity. */
const WORKFLOW_ID_KEPT = /[A-Za-z0-9._@+/:-]/;

/**
 * The identity of a Temporal workflow that calls asyncjob (a parent, a Nexus caller), recorded as the operation's
 * starter or a cancel's requester. An ID too long for an identity is named by the first 32 hex of its SHA-256.
 */
export function workflowActor(namespace: string, workflowId: string): string {
  const bytes = new TextEncoder().encode(workflowId);
  let encoded = '';
  for (const byte of bytes) {
    const char = String.fromCharCode(byte);
    encoded +=
      byte < 0x80 && WORKFLOW_ID_KEPT.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  const text = `workflow:${namespace}/${encoded}`;
  return text.length <= MAX_ACTOR_LENGTH
    ? text
    : `workflow:${namespace}/sha256-${sha256HexOfText(workflowId).slice(0, 32)}`;
}

/**
 * True for a calling workflow's identity (`workflow:<namespace>/<ID>`): what Temporal says of a caller (a parent
 * workflow, a Nexus request's link), so never accepted as written by a client, a tool or a Nexus input (N1, N4).
 */
export function isWorkflowCaller(text: unknown): boolean {
  const parsed = parseActor(text);
  return parsed.kind === 'ok' && parsed.actor.id.startsWith('workflow:');
}

/** The result of {@link parseActor}. */
export type ActorParse = { kind: 'ok'; actor: Actor } | { kind: 'invalid'; message: string };

function codePoint(char: string): string {
  return `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** NFKC, case-folded, trimmed, white space collapsed (NFKC turns no-break and wide spaces into plain ones). */
function fold(text: string): string {
  return text.normalize('NFKC').toLowerCase().normalize('NFKC').trim().replace(/\s+/gu, ' ');
}

function mixedScripts(text: string): string | undefined {
  const used = LOOK_ALIKE_SCRIPTS.filter(([, pattern]) => pattern.test(text)).map(([name]) => name);
  return used.length > 1 ? used.join(' and ') : undefined;
}

/** An identity without a scheme: an e-mail address or a name (a person), or one of asyncjob's own words. */
function bare(name: string): Actor | string {
  const mixed = mixedScripts(name);
  if (mixed !== undefined) return `mixes ${mixed} letters (a look-alike of another identity)`;
  if (name.includes('@')) return EMAIL.test(name) ? { kind: 'human', id: name } : 'not an e-mail address';
  if (SERVICE_WORDS.has(name)) return { kind: 'service', id: name };
  return BARE_NAME.test(name)
    ? { kind: 'human', id: name }
    : "a name holds letters, digits, . _ - ' and single spaces only";
}

/** The identity a folded text names, in its one recorded spelling, or why it names none. */
function classify(folded: string): Actor | string {
  const schemed = /^([a-z][a-z0-9-]*):(.*)$/u.exec(folded);
  if (!schemed) return bare(folded);
  const [, word, name] = schemed as unknown as [string, string, string];
  const scheme = SCHEMES[word];
  if (word === 'workflow') return 'a calling workflow is workflow:<namespace>/<workflow ID>';
  if (scheme === undefined) return `unknown scheme "${word}:" (use agent:, service:, human:, or an e-mail address)`;
  if (scheme.recordedAs === null) {
    const person = bare(name);
    return typeof person === 'string' || person.kind === 'human' ? person : `"${name}" is asyncjob's own, not a person`;
  }
  // The scheme word counts: a process's name is in Latin letters, so no whole-script look-alike names one.
  const mixed = mixedScripts(folded);
  if (mixed !== undefined) return `mixes ${mixed} letters (a look-alike of another identity)`;
  if (!SCHEMED_NAME.test(name)) return `"${word}:" names hold letters, digits and . _ @ + / : - only`;
  return { kind: scheme.kind, id: `${scheme.recordedAs}:${name}` };
}

/**
 * Parses an identity into its canonical form, or says why it is not one. Never guesses: a hidden character or a
 * mix of look-alike scripts is refused, not removed, so what a person typed is what is compared.
 */
export function parseActor(text: unknown): ActorParse {
  if (typeof text !== 'string') return { kind: 'invalid', message: 'an identity is text' };
  // The whole text, edges included: trim() would drop a byte order mark, a line separator or a newline unseen.
  const hidden = INVISIBLE.exec(text);
  if (hidden) return { kind: 'invalid', message: `holds an invisible or control character (${codePoint(hidden[0])})` };
  const caller = WORKFLOW_CALLER.exec(text.normalize('NFKC').trim());
  if (caller) {
    const id = `workflow:${caller[1]}/${caller[2]}`;
    if (id.length > MAX_ACTOR_LENGTH) return { kind: 'invalid', message: `longer than ${MAX_ACTOR_LENGTH}` };
    return { kind: 'ok', actor: { kind: 'service', id } };
  }
  const canonical = fold(text);
  if (canonical.length === 0) return { kind: 'invalid', message: 'an identity is not empty' };
  if (canonical.length > MAX_ACTOR_LENGTH) return { kind: 'invalid', message: `longer than ${MAX_ACTOR_LENGTH}` };
  const hiddenAfterFold = INVISIBLE.exec(canonical);
  if (hiddenAfterFold)
    return { kind: 'invalid', message: `holds an invisible character (${codePoint(hiddenAfterFold[0])})` };
  const actor = classify(canonical);
  return typeof actor === 'string' ? { kind: 'invalid', message: actor } : { kind: 'ok', actor };
}

/** The canonical text of an identity known to be valid (ours, or parsed before); throws for any other. */
export function canonicalActor(text: string): string {
  const parsed = parseActor(text);
  if (parsed.kind === 'invalid') throw new TypeError(`not an identity: ${parsed.message}`);
  return parsed.actor.id;
}

/** True when two identities are the same party: compared in canonical form; an invalid one matches nothing. */
export function sameActor(a: string, b: string): boolean {
  const left = parseActor(a);
  const right = parseActor(b);
  return left.kind === 'ok' && right.kind === 'ok' && left.actor.id === right.actor.id;
}

/** Text as typed with every invisible or control character written out (`\u{200B}`), for records of refusals. */
export function shownAsTyped(text: string): string {
  return text.replace(
    new RegExp(INVISIBLE.source, 'gu'),
    (char) => `\\u{${char.codePointAt(0)!.toString(16).toUpperCase()}}`,
  );
}

/** The kind of a recorded identity, or undefined when it is not a valid one. */
export function actorKind(text: string): ActorKind | undefined {
  const parsed = parseActor(text);
  return parsed.kind === 'ok' ? parsed.actor.kind : undefined;
}

/**
 * An identity given at a boundary (a start request, a decision, a cancel or extension request, a policy file):
 * parsed and replaced by its canonical text, or refused naming why.
 */
export const actorInputSchema = lazySchema(() =>
  z.string().transform((text, ctx) => {
    const parsed = parseActor(text);
    if (parsed.kind === 'ok') return parsed.actor.id;
    ctx.addIssue({ code: 'custom', message: `not an identity: ${parsed.message}` });
    return z.NEVER;
  }),
);
