/**
 * The `deciders` section of the operator's policy file (D2, D3, D4), as written: durations as text (`1h`), keys
 * per decider, rules in the order they are tried. Validated with every problem named, normalised (identities
 * canonical, durations in ms) into the `DeciderPolicy` the workflow checks decisions against.
 */
import { z } from 'zod';
import { parseDuration } from '../cli/duration';
import { parseActor, shownAsTyped } from '../core/actor';
import { canonicalJson } from '../core/canonical-json';
import {
  type DeciderPolicyInForce,
  DEFAULT_EXTENSION_REQUESTS,
  deciderPolicySchema,
  inForce,
  publicKeySchema,
} from '../core/decider-policy';
import { decisionOptionSchema } from '../core/escalation';
import { escalationReasonSchema } from '../core/journal';
import { PolicyFileError, POLICY_FILE_KEYS, policyIssues, readPolicyDocument } from './policy-file';

/** The largest policy an operation carries (it is in workflow history once per operation and in its journal). */
const MAX_DECIDER_POLICY_CHARS = 32 * 1024;

const durationText = z.string().transform((text, ctx) => {
  const parsed = parseDuration(text);
  if (parsed.kind === 'ok') return parsed.ms;
  ctx.addIssue({ code: 'custom', message: parsed.message });
  return z.NEVER;
});

/** An identity as written (or, where `groups` is true, `group:<name>`), checked here so no problem hides another. */
function identityText(groups: boolean) {
  return z.string().superRefine((text, ctx) => {
    if (groups && text.startsWith('group:')) return;
    const parsed = parseActor(text);
    if (parsed.kind === 'invalid') ctx.addIssue({ code: 'custom', message: `not an identity: ${parsed.message}` });
  });
}

const reasonText = z.string().refine((reason) => reason === '*' || escalationReasonSchema.safeParse(reason).success, {
  error: (issue) => `unknown escalation reason "${String(issue.input)}" (use * or a reason of docs/rules.md E1)`,
});

const ruleText = z
  .object({
    name: z.string(),
    who: z.array(identityText(true)).min(1),
    providers: z.array(z.string()).min(1).default(['*']),
    reasons: z.array(reasonText).min(1).default(['*']),
    options: z.array(decisionOptionSchema).min(1),
    largestExtension: durationText.optional(),
    mostExtraChecks: z.number().int().nonnegative().optional(),
    signed: z.boolean().optional(),
  })
  .strict();

const decidersText = z
  .object({
    /** Deciders who sign: identity → public keys (`asyncjob keys new` prints the line). */
    keys: z.record(z.string(), z.array(publicKeySchema).min(1).max(10)).default({}),
    groups: z.record(z.string(), z.array(identityText(false)).min(1)).default({}),
    rules: z.array(ruleText).min(1),
    signaturesRequired: z
      .object({ options: z.array(decisionOptionSchema).default([]), extensionsOver: durationText.optional() })
      .strict()
      .default({ options: [] }),
    extensionRequests: z
      .object({ most: z.number().int().min(1).max(100), within: durationText })
      .strict()
      .optional(),
  })
  .strict();

const fileSchema = z.object({ version: z.literal(1), deciders: decidersText }).catchall(z.unknown());

type Issue = { path: (string | number)[]; message: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sections no reader knows (checked on the document as written, so other problems do not hide them). */
function sectionIssues(document: unknown): Issue[] {
  if (!isRecord(document)) return [];
  return Object.keys(document)
    .filter((key) => !(POLICY_FILE_KEYS as readonly string[]).includes(key))
    .map((key) => ({ path: [key], message: `unknown section (known: ${POLICY_FILE_KEYS.join(', ')})` }));
}

/** Two spellings of one identity among the keys are one decider named twice (D1). */
function keysIssues(keys: Record<string, unknown>): Issue[] {
  const seen = new Map<string, string>();
  const issues: Issue[] = [];
  for (const identity of Object.keys(keys)) {
    const parsed = parseActor(identity);
    if (parsed.kind === 'invalid') {
      issues.push({
        path: ['deciders', 'keys', shownAsTyped(identity)],
        message: `not an identity: ${parsed.message}`,
      });
      continue;
    }
    const twin = seen.get(parsed.actor.id);
    if (twin !== undefined)
      issues.push({ path: ['deciders', 'keys', identity], message: `the same decider as "${shownAsTyped(twin)}"` });
    seen.set(parsed.actor.id, identity);
  }
  return issues;
}

function normalised(text: z.infer<typeof decidersText>): unknown {
  return {
    deciders: Object.entries(text.keys).map(([identity, keys]) => ({ identity, keys })),
    groups: text.groups,
    rules: text.rules.map(({ largestExtension, ...rule }) => ({
      ...rule,
      ...(largestExtension !== undefined ? { largestExtensionMs: largestExtension } : {}),
    })),
    signatures: {
      options: text.signaturesRequired.options,
      ...(text.signaturesRequired.extensionsOver !== undefined
        ? { extensionsOverMs: text.signaturesRequired.extensionsOver }
        : {}),
    },
    extensionRequests: text.extensionRequests
      ? { most: text.extensionRequests.most, withinMs: text.extensionRequests.within }
      : { ...DEFAULT_EXTENSION_REQUESTS },
  };
}

/** Rules name groups the file defines, and no rule name twice (read as written, whatever else is wrong). */
function referenceIssues(section: Record<string, unknown>): Issue[] {
  const issues: Issue[] = [];
  const groups = isRecord(section.groups) ? section.groups : {};
  const names = new Set<unknown>();
  (Array.isArray(section.rules) ? section.rules : []).forEach((rule: unknown, index) => {
    if (!isRecord(rule)) return;
    if (typeof rule.name === 'string' && names.has(rule.name))
      issues.push({ path: ['deciders', 'rules', index, 'name'], message: 'named twice' });
    names.add(rule.name);
    (Array.isArray(rule.who) ? rule.who : []).forEach((who: unknown, w) => {
      if (typeof who === 'string' && who.startsWith('group:') && !Object.hasOwn(groups, who.slice('group:'.length)))
        issues.push({ path: ['deciders', 'rules', index, 'who', w], message: `no group "${who.slice(6)}" is defined` });
    });
  });
  return issues;
}

/**
 * Validates a parsed policy document's `deciders` section and returns the policy in force with its digest.
 * Throws {@link PolicyFileError} naming every problem.
 */
export function deciderPolicyFrom(document: unknown, source: string): DeciderPolicyInForce {
  const text = fileSchema.safeParse(document);
  const section = isRecord(document) && isRecord(document.deciders) ? document.deciders : {};
  const issues = policyIssues([
    ...(text.success ? [] : text.error.issues),
    ...sectionIssues(document),
    ...keysIssues(isRecord(section.keys) ? section.keys : {}),
    ...referenceIssues(section),
  ]);
  if (!text.success || issues.length > 0) throw new PolicyFileError(source, issues, 'decider policy');
  const parsed = deciderPolicySchema.safeParse(normalised(text.data.deciders));
  if (!parsed.success)
    throw new PolicyFileError(
      source,
      policyIssues(parsed.error.issues.map((i) => ({ ...i, path: ['deciders', ...i.path] }))),
      'decider policy',
    );
  if (canonicalJson(parsed.data).length > MAX_DECIDER_POLICY_CHARS)
    throw new PolicyFileError(
      source,
      [{ path: 'deciders', message: `larger than ${MAX_DECIDER_POLICY_CHARS} characters as canonical JSON` }],
      'decider policy',
    );
  return inForce(parsed.data);
}

/** Reads a policy file and returns its decider policy in force ({@link deciderPolicyFrom}). */
export function loadDeciderPolicy(file: string, readText?: (file: string) => string): DeciderPolicyInForce {
  return deciderPolicyFrom(readPolicyDocument(file, readText, 'decider policy'), file);
}
